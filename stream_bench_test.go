package mcs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
)

// proseChunks is 64 KiB of prose split into 4,101 chunks of 15 or 16 bytes, as a
// provider streams a long answer.
func proseChunks() []string {
	const size, n = 64 << 10, 4101
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog; it's {not} a call. ", size/64+1)[:size]
	chunks := make([]string, 0, n)
	for i := range n {
		chunks = append(chunks, prose[i*size/n:(i+1)*size/n])
	}
	return chunks
}

// BenchmarkStreamAddProse adds 64 KiB of prose in 4,101 chunks to a buffer and
// then processes it once (Finish, ProcessStream, Text): the cost of a stream a
// client only looks at in the end. ns/chunk is the time per chunk of the whole
// workload, the caller's conversion of each string chunk to an interface
// included.
func BenchmarkStreamAddProse(b *testing.B) { benchProse(b, false) }

// BenchmarkStreamAddStringProse is BenchmarkStreamAddProse with the chunks added
// as strings (AddString), as a client that holds each text delta as a string
// does: no interface conversion per chunk.
func BenchmarkStreamAddStringProse(b *testing.B) { benchProse(b, true) }

func benchProse(b *testing.B, viaString bool) {
	chunks := proseChunks()
	d := mcs.NewBaseDriver(&calcDriver{})
	ctx := context.Background()
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		buf := d.NewStreamBuffer()
		for _, c := range chunks {
			if viaString {
				buf.AddString(c)
			} else {
				buf.Add(c)
			}
		}
		buf.Finish()
		if r := d.ProcessStream(ctx, buf); r.CallExecuted || r.CallPending {
			b.Fatalf("prose gave %+v", r)
		}
		if got := buf.Text(); len(got) != 64<<10 {
			b.Fatalf("shown %d bytes, want %d", len(got), 64<<10)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(chunks)), "ns/chunk")
}

// BenchmarkStreamAddText is the buffer's own cost of one Add of a 16-byte text
// chunk to a plain-text stream, its hot path (target: 40 ns or less). The chunk
// is an interface value already: converting a string to one (an allocation of
// the caller's, as in BenchmarkStreamAddProse) is not counted.
func BenchmarkStreamAddText(b *testing.B) {
	var chunk any = strings.Repeat("The quick brown ", 1)
	buf := mcs.NewStreamBuffer()
	buf.Add("start")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		buf.Add(chunk)
		if i++; i == 1<<16 { // keep the buffer's size bounded
			b.StopTimer()
			buf = mcs.NewStreamBuffer()
			buf.Add("start")
			i = 0
			b.StartTimer()
		}
	}
}

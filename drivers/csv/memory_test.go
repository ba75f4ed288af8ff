package csv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
)

// heapSampler passes reads through and, every step bytes, collects garbage and
// records the live heap, so that the peak of memory in use while streaming can be
// checked without sleeping or sampling from another goroutine.
type heapSampler struct {
	r         io.Reader
	step, n   int
	next      int
	base, max uint64
}

func newHeapSampler(r io.Reader, step int) *heapSampler {
	s := &heapSampler{r: r, step: step, next: step}
	s.base = liveHeap()
	return s
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func (s *heapSampler) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += n
	if s.n >= s.next {
		s.next += s.step
		if h := liveHeap(); h > s.max {
			s.max = h
		}
	}
	return n, err
}

// growth is the peak of the live heap above its level before reading.
func (s *heapSampler) growth() uint64 {
	if s.max < s.base {
		return 0
	}
	return s.max - s.base
}

// TestSummarizeMemoryBounded streams a 12 MiB file: the live heap must grow by
// far less than the file, which proves that memory does not depend on its size
// (the 32 MiB budget holds whatever the size).
func TestSummarizeMemoryBounded(t *testing.T) {
	const size = 12 << 20
	sampler := newHeapSampler(newGen(size), 1<<20)
	tbl, err := newTable(sampler, false)
	if err != nil {
		t.Fatal(err)
	}
	col, err := tbl.column("amount")
	if err != nil {
		t.Fatal(err)
	}
	var st stats
	rows := 0
	err = tbl.each(context.Background(), func(rec []string) bool {
		rows++
		st.add(rec[col], tbl.decimalComma())
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if sampler.n < size {
		t.Fatalf("read %d bytes, want %d", sampler.n, size)
	}
	t.Logf("live heap growth: %d bytes", sampler.growth())
	const budget = 4 << 20
	if g := sampler.growth(); g > budget {
		t.Errorf("the live heap grew by %d bytes while streaming %d bytes; want at most %d", g, size, budget)
	}
	count, nonNumeric, sum, lo, hi := genStats(rows)
	if st.count != count || st.nonNumeric != nonNumeric || st.min != lo || st.max != hi || math.Abs(st.total()-sum) > 1e-6*sum {
		t.Errorf("stats = count %d, non-numeric %d, min %v, max %v, sum %v; want %d, %d, %v, %v, %v",
			st.count, st.nonNumeric, st.min, st.max, st.total(), count, nonNumeric, lo, hi, sum)
	}
}

// TestHugeRecordRefused feeds an unclosed quote followed by 16 MiB: the read fails
// once the row passes the limit instead of buffering the whole rest of the file.
func TestHugeRecordRefused(t *testing.T) {
	body := io.MultiReader(strings.NewReader("a,b\n1,\"never closed"), &repeatReader{c: 'x', left: 16 << 20})
	sampler := newHeapSampler(body, 1<<20)
	tbl, err := newTable(sampler, false)
	if err != nil {
		t.Fatal(err)
	}
	tbl.path = "huge.csv"
	err = tbl.each(context.Background(), func([]string) bool { return true })
	if !errors.Is(err, errRecordTooLarge) || !strings.Contains(err.Error(), "huge.csv: line 2: a row is larger than 1 MiB") {
		t.Errorf("error = %v, want a row too large on line 2", err)
	}
	if sampler.n > 2<<20 {
		t.Errorf("read %d bytes before refusing the row", sampler.n)
	}
	t.Logf("live heap growth: %d bytes after %d bytes read", sampler.growth(), sampler.n)
	if g := sampler.growth(); g > 8<<20 {
		t.Errorf("the live heap grew by %d bytes", g)
	}
}

type repeatReader struct {
	c    byte
	left int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.left)
	for i := range n {
		p[i] = r.c
	}
	r.left -= n
	return n, nil
}

// TestUnclosedQuoteInTheFirstField: a quote left open in the first field of a
// record, followed by more than 1 MiB, gives the intended error (it used to panic
// in encoding/csv's FieldPos), on the header and on a data row.
func TestUnclosedQuoteInTheFirstField(t *testing.T) {
	tests := []struct {
		name, head string
		open       bool // the error comes when opening (the header)
		line       int
	}{
		{"header", "\"", true, 1},
		{"first data row", "a,b\n\"", false, 2},
		{"after a multi-line row", "a,b\n\"x\ny\",1\n\"", false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := io.MultiReader(strings.NewReader(tt.head), &repeatReader{c: 'x', left: 2 << 20})
			tbl, err := newTable(body, false)
			if !tt.open {
				if err != nil {
					t.Fatal(err)
				}
				tbl.path = "q.csv"
				err = tbl.each(context.Background(), func([]string) bool { return true })
			}
			want := fmt.Sprintf("line %d: a row is larger than 1 MiB", tt.line)
			if !errors.Is(err, errRecordTooLarge) || !strings.Contains(err.Error(), want) {
				t.Errorf("error = %v, want %q", err, want)
			}
		})
	}
}

// FuzzUnbalancedQuotes reads CSV text with quotes left open or doubled at random
// places, in front of a long tail: reading never panics, and a failure is one of the
// reader's own errors.
func FuzzUnbalancedQuotes(f *testing.F) {
	for _, s := range []string{"\"", "a,\"b\n\"", "\"\"\"", "a\n\"x\"y\"\n", "x,\"\n\"\n\""} {
		f.Add(s, uint16(0))
		f.Add(s, uint16(40000))
	}
	f.Fuzz(func(t *testing.T, head string, tail uint16) {
		body := io.MultiReader(strings.NewReader(head), &repeatReader{c: 'x', left: int(tail) * 40})
		tbl, err := newTable(body, false)
		if err != nil {
			return
		}
		tbl.path = "f.csv"
		err = tbl.each(context.Background(), func([]string) bool { return true })
		if err != nil && !errors.Is(err, errRecordTooLarge) && !strings.Contains(err.Error(), "not valid CSV") {
			t.Fatalf("unexpected error %v", err)
		}
	})
}

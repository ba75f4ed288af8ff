package redact

import (
	"strconv"
	"strings"
	"testing"
)

// BenchmarkTextPairs scrubs texts made of pairs that are not secrets and one that
// is, at three sizes, with no cut (as WithMaxValueLen(0) in the hooks audit). In
// no_secret_words no pair has a sensitive name and the one secret follows
// "Basic ".
func BenchmarkTextPairs(b *testing.B) {
	r := New(nil, 0)
	for _, c := range []struct {
		name, unit string
	}{{"assignments", "a=b "}, {"query", "k=v&"}, {"chain_colon", "pkg: "}, {"no_secret_words", "id=7 name: Rex; "}} {
		for _, n := range []int{1 << 10, 1 << 14, 1 << 16} {
			s := strings.Repeat(c.unit, n/len(c.unit)) + " password=x"
			if c.name == "no_secret_words" {
				s = strings.Repeat(c.unit, n/len(c.unit)) + " Basic dXNlcjpwYXNz"
			}
			b.Run(c.name+"/"+strconv.Itoa(len(s)), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				b.ReportAllocs()
				for b.Loop() {
					if !strings.HasSuffix(r.Text(s, nil), Redacted) {
						b.Fatal("not redacted")
					}
				}
			})
		}
	}
}

// BenchmarkTextKnown scrubs an upstream error of about 1 KiB that echoes the
// request, with the call's two secret arguments known (as the hooks audit
// does for a failed call): once in their plain spelling, once in base64 and
// JSON escapes, and once not echoed.
func BenchmarkTextKnown(b *testing.B) {
	r := New(nil, DefaultMaxValueLen)
	_, known := r.Args(map[string]any{"api_key": "sk-live-0123456789", "password": "hunter2-hunter2"})
	for _, c := range []struct{ name, echo string }{
		{"plain", "sk-live-0123456789"},
		{"encoded", "c2stbGl2ZS0wMTIzNDU2Nzg5 and \\u0073k-live-0123456789"},
		{"none", "nothing of the request"},
	} {
		s := "upstream: 400 Bad Request: " + strings.Repeat(`{"field":"name","reason":"invalid"},`, 28) + c.echo
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Text(s, known)
			}
		})
	}
}

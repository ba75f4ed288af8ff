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

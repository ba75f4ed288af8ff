package outcap

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
		cut    bool
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef", false},
		{"exactly", 6, []string{"abcdef"}, "abcdef", false},
		{"head and tail", 6, []string{"abcdefghij"}, "abc\n[... 4 bytes cut: the output had 10 bytes; the first 3 and the last 3 are shown ...]\nhij", true},
		{"many small writes", 4, []string{"a", "b", "c", "d", "e", "f", "g"}, "ab\n[... 3 bytes cut: the output had 7 bytes; the first 2 and the last 2 are shown ...]\nfg", true},
		{"tail wraps", 6, []string{"abc", "de", "fgh", "ij", "k"}, "abc\n[... 5 bytes cut: the output had 11 bytes; the first 3 and the last 3 are shown ...]\nijk", true},
		{"cut characters dropped", 4, []string{"aé", "xxxxxxxx", "éb"}, "a\n[... 10 bytes cut: the output had 14 bytes; the first 2 and the last 2 are shown ...]\nb", true},
		{"invalid utf-8 replaced", 10, []string{"a\xffb"}, "a\uFFFDb", false},
		{"zero keeps nothing", 0, []string{"abc"}, "\n[... 3 bytes cut: the output had 3 bytes; the first 0 and the last 0 are shown ...]\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &Buffer{Max: tc.max}
			total := 0
			for _, w := range tc.writes {
				n, err := b.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
				total += n
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			if b.Truncated() != tc.cut || b.Total() != int64(total) {
				t.Errorf("Truncated %v, Total %d; want %v, %d", b.Truncated(), b.Total(), tc.cut, total)
			}
		})
	}
}

func TestBufferLarge(t *testing.T) {
	b := &Buffer{Max: 1000}
	for i := range 10000 {
		b.Write([]byte(strings.Repeat(string(rune('a'+i%26)), 97)))
	}
	s := b.String()
	if !strings.HasPrefix(s, strings.Repeat("a", 97)) || len(s) > 1200 || !strings.HasSuffix(s, strings.Repeat(string(rune('a'+9999%26)), 97)) {
		t.Errorf("String = %.120q...%q", s, s[len(s)-120:])
	}
}

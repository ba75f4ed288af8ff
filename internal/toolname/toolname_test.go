package toolname

import (
	"strings"
	"testing"
)

func TestShorten(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"fits", "issues_get", 64, "issues_get"},
		{"exactly the limit", strings.Repeat("b", 64), 64, strings.Repeat("b", 64)},
		{"cut with hash", long, 64, strings.Repeat("a", 56) + "_" + Shorten(long, 64)[57:]},
		{"trailing separator dropped", strings.Repeat("c", 55) + "__" + strings.Repeat("d", 20), 64, strings.Repeat("c", 55) + "_" + Shorten(strings.Repeat("c", 55)+"__"+strings.Repeat("d", 20), 64)[56:]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Shorten(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("Shorten = %q, want %q", got, tc.want)
			}
			if len(got) > tc.max {
				t.Errorf("len = %d > %d", len(got), tc.max)
			}
			if strings.Contains(got[max(0, len(got)-HashLen-1):], "__") {
				t.Errorf("%q has a double underscore before the hash", got)
			}
		})
	}
}

func TestShortenStableAndDistinct(t *testing.T) {
	a := strings.Repeat("x", 60) + "_alpha"
	b := strings.Repeat("x", 60) + "_bravo"
	if first, again := Shorten(a, 64), Shorten(a, 64); first != again {
		t.Fatal("not stable")
	}
	if Shorten(a, 64) == Shorten(b, 64) {
		t.Fatalf("two names share %q", Shorten(a, 64))
	}
	// Fixed value: the suffix must not change between releases.
	if got, want := Shorten("repos_list_for_authenticated_user_with_extremely_long_suffix_name", 40), "repos_list_for_authenticated_use_"; !strings.HasPrefix(got, want) || len(got) != 40 {
		t.Errorf("Shorten = %q (len %d), want prefix %q and length 40", got, len(got), want)
	}
	if got := Shorten("abcdefghijk", 4); len(got) != 4 {
		t.Errorf("tiny max: %q", got)
	}
}

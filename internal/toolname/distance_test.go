package toolname

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"spec", "spec", 0}, {"spek", "spec", 1}, {"get_tme", "get_time", 1},
		{"", "abc", 3}, {"kitten", "sitting", 3}, {strings.Repeat("a", 1000), strings.Repeat("a", 300) + "b", 0},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%.10q, %.10q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

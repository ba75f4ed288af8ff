package filetools

import (
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "a/b/main.golden", false},
		{"main.?o", "x/main.go", true},
		{"[mn]ain.go", "nain.go", true},
		{"a/*.go", "a/x.go", true},
		{"a/*.go", "a/b/x.go", false},
		{"a/**/*.go", "a/x.go", true},
		{"a/**/*.go", "a/b/c/x.go", true},
		{"a/**/*.go", "b/a/x.go", false},
		{"**/x.go", "x.go", true},
		{"**/x.go", "p/q/x.go", true},
		{"a/**", "a", true},
		{"a/**", "a/b/c", true},
		{"a/**/**/b", "a/b", true},
		{"./a/*.go", "a/x.go", true},
		{"/a/*.go", "a/x.go", true},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/b/c", false},
		{"../*", "x", false},
		{strings.Repeat("**/", 50) + "x", strings.Repeat("d/", 60) + "x", true},
		{strings.Repeat("**/", 50) + "y", strings.Repeat("d/", 60) + "x", false},
	}
	for _, tc := range tests {
		g, err := compileGlob(tc.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tc.pattern, err)
			continue
		}
		if got := g.match(tc.path); got != tc.want {
			t.Errorf("%q matches %q = %t, want %t", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestGlobErrors(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"", "pattern is empty"},
		{"[", "is not a valid glob"},
		{"a/[b/c", "is not a valid glob"},
		{"a\x00", "NUL byte"},
		{strings.Repeat("*", 5000), "the limit is 4096"},
	}
	for _, tc := range tests {
		if _, err := compileGlob(tc.pattern); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compileGlob(%.20q) error = %v, want it to contain %q", tc.pattern, err, tc.want)
		}
	}
}

func BenchmarkGlobMatch(b *testing.B) {
	g, err := compileGlob("src/**/test/**/*_test.go")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		g.match("src/a/b/c/test/d/e/f/foo_test.go")
	}
}

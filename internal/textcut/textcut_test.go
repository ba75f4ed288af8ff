package textcut

import "testing"

func TestPrefix(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"éé", 3, "é"}, // é is 2 bytes: the second one would be split
		{"éé", 2, "é"},
		{"éé", 1, ""},
		{"a😀b", 4, "a"}, // the emoji is 4 bytes
		{"a😀b", 5, "a😀"},
	}
	for _, tt := range tests {
		if got := Prefix(tt.s, tt.n); got != tt.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestTrimIncomplete(t *testing.T) {
	tests := []struct{ s, want string }{
		{"", ""},
		{"abc", "abc"},
		{"ab\xc3", "ab"},         // first byte of é
		{"ab\xf0\x9f\x98", "ab"}, // three of the four bytes of 😀
		{"abé", "abé"},
		{"a😀", "a😀"},
		{"ab\x80", "ab\x80"}, // a stray continuation byte is not a cut sequence
	}
	for _, tt := range tests {
		if got := TrimIncomplete(tt.s); got != tt.want {
			t.Errorf("TrimIncomplete(%q) = %q, want %q", tt.s, got, tt.want)
		}
		if got := string(TrimIncomplete([]byte(tt.s))); got != tt.want {
			t.Errorf("TrimIncomplete([]byte(%q)) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

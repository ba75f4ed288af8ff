// Package textcut shortens text without splitting a UTF-8 sequence, for the
// packages that cut model-facing or user-facing text to a size.
package textcut

import "unicode/utf8"

// Prefix returns the longest prefix of s of at most n bytes that does not end in
// the middle of a UTF-8 sequence. n <= 0 gives "".
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// TrimIncomplete drops a UTF-8 sequence that was cut off at the end of s, such as
// the end of a buffer read in pieces; complete text is returned unchanged.
func TrimIncomplete[S ~string | ~[]byte](s S) S {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(string(s[i:])) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

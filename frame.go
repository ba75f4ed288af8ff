package mcs

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The escaping of text-mode result frames: the end marker wherever a result holds
// something a model would read as it, and the tool name wherever the frame repeats
// it.

// endMatcher finds the text a model would read as a frame's end marker: its
// visible characters in any letter case (Unicode simple folding), with whitespace
// and invisible characters (zero-width spaces and joiners, soft hyphens, bidi
// controls, variation selectors) anywhere after the first one, and full-width or
// small-form look-alikes of the ASCII punctuation. When the marker ends with a
// closing bracket after a name ("</tool_result>") the bracket may be missing or
// follow attributes: "</tool_result foo>" and "</tool_result" are the marker too,
// "</tool_results>" is not.
type endMatcher struct {
	runes []rune // the marker's visible runes, folded (see foldRune)
	tag   bool   // the last rune of the marker is a bracket after a name: dropped from runes
}

func newEndMatcher(marker string) *endMatcher {
	m := &endMatcher{}
	for _, r := range marker {
		if !ignorable(r) {
			m.runes = append(m.runes, foldRune(r))
		}
	}
	if n := len(m.runes); n >= 2 && isCloser(m.runes[n-1]) && isNameRune(m.runes[n-2]) {
		m.runes, m.tag = m.runes[:n-1], true
	}
	return m
}

// isCloser reports the folded closing brackets a tag-like marker ends with.
func isCloser(r rune) bool { return r == '>' || r == ']' || r == ')' || r == '}' }

// isNameRune reports the runes of a tag's name: a following one makes another tag.
func isNameRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || r == ':' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// ignorable reports whitespace and the characters that render as nothing: format
// characters (Cf: zero-width space and joiners, soft hyphen, bidi controls, byte
// order mark), variation selectors, the combining grapheme joiner, Mongolian
// variation selectors and the Hangul fillers.
func ignorable(r rune) bool {
	switch {
	case r < 0x80:
		return r == ' ' || (r >= '\t' && r <= '\r')
	case unicode.IsSpace(r), unicode.Is(unicode.Cf, r):
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, r >= 0x180B && r <= 0x180F:
		return true
	case r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0:
		return true
	}
	return false
}

// foldRune maps r to one representative of its letter-case orbit, and full-width,
// small-form and other look-alikes of ASCII punctuation to the ASCII character.
func foldRune(r rune) rune {
	if r < 0x80 {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	switch {
	case r >= 0xFF01 && r <= 0xFF5E: // full-width forms of ASCII
		return foldRune(r - 0xFEE0)
	case r == 0xFE64, r == 0x2039, r == 0x3008, r == 0x27E8, r == 0x2329:
		return '<'
	case r == 0xFE65, r == 0x203A, r == 0x3009, r == 0x27E9, r == 0x232A:
		return '>'
	case r == 0x2215, r == 0x2044, r == 0x29F8:
		return '/'
	}
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	return m
}

// matchAt reports whether the marker starts at s[i], whose first rune (of size n)
// is already known to match.
func (m *endMatcher) matchAt(s string, i, n int) bool {
	j := i + n
	for k := 1; k < len(m.runes); k++ {
		for {
			if j >= len(s) {
				return false
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if !ignorable(r) {
				if foldRune(r) != m.runes[k] {
					return false
				}
				j += size
				break
			}
			j += size
		}
	}
	if !m.tag {
		return true
	}
	// the name must end here: whatever follows but a name rune (invisible ones
	// skipped) ends it
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if !ignorable(r) || unicode.IsSpace(r) {
			return !isNameRune(foldRune(r))
		}
		j += size
	}
	return true
}

// writeEscaped writes text to b with a backslash after the first character of
// every occurrence of the marker ("</tool_result>" becomes "<\/tool_result>"),
// so that text cannot end the frame it is written in.
func (m *endMatcher) writeEscaped(b *strings.Builder, text string) {
	if len(m.runes) == 0 {
		b.WriteString(text)
		return
	}
	first := m.runes[0]
	lo, up := byte(0), byte(0) // the ASCII bytes that fold to first
	if first < 0x80 {
		lo, up = byte(first), byte(first)
		if 'A' <= first && first <= 'Z' {
			lo = byte(first - 'A' + 'a')
		}
	}
	start := 0
	for i := 0; i < len(text); {
		c := text[i]
		if c < 0x80 {
			if (c == lo || c == up) && m.matchAt(text, i, 1) {
				b.WriteString(text[start : i+1])
				b.WriteByte('\\')
				start = i + 1
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if foldRune(r) == first && m.matchAt(text, i, n) {
			b.WriteString(text[start : i+n])
			b.WriteByte('\\')
			start = i + n
		}
		i += n
	}
	b.WriteString(text[start:])
}

// frameName returns name as the frame may repeat it: letters, digits and
// "_-.:/@+~" as they are, every other character (markup, quotes, brackets, line
// breaks, invisible characters) as a character reference such as "&#x3c;". A name
// that needs no escaping is returned as is, without allocating.
func frameName(name string) string {
	i := 0
	for ; i < len(name); i++ {
		if c := name[i]; c >= 0x80 || !plainNameByte(c) {
			break
		}
	}
	if i == len(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 16)
	b.WriteString(name[:i])
	for _, r := range name[i:] {
		if r < 0x80 && plainNameByte(byte(r)) || r >= 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) && !ignorable(r) {
			b.WriteRune(r)
			continue
		}
		b.WriteString("&#x")
		const hex = "0123456789abcdef"
		var digits [8]byte
		k := len(digits)
		for v := uint32(r); ; v >>= 4 {
			k--
			digits[k] = hex[v&0xf]
			if v < 0x10 {
				break
			}
		}
		b.Write(digits[k:])
		b.WriteByte(';')
	}
	return b.String()
}

func plainNameByte(c byte) bool {
	return isIdent(c) || c == '.' || c == ':' || c == '/' || c == '@' || c == '+' || c == '~'
}

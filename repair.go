package mcs

import "strings"

// repairJSON rewrites the common slips of models into JSON: single-quoted strings and
// keys, bare keys, Python literals (True, False, None), trailing commas, // and /* */
// comments, and raw control characters inside strings. It never fails; the result
// is checked by the JSON decoder.
func repairJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	n := len(s)
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			i = copyString(&b, s, i)
		case c == '/' && i+1 < n && s[i+1] == '/':
			for i < n && s[i] != '\n' {
				i++
			}
			i--
		case c == '/' && i+1 < n && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = n
			} else {
				i += 2 + end + 1
			}
		case c == ',':
			// drop a comma followed only by space or comments before a closer
			j := skipSpaceAndComments(s, i+1)
			if j < n && (s[j] == '}' || s[j] == ']') {
				continue
			}
			b.WriteByte(c)
		case isIdentStart(c):
			j := i
			for j < n && isIdent(s[j]) {
				j++
			}
			word := s[i:j]
			k := skipSpaceAndComments(s, j)
			switch {
			case k < n && s[k] == ':':
				b.WriteByte('"')
				b.WriteString(word)
				b.WriteByte('"')
			case word == "True":
				b.WriteString("true")
			case word == "False":
				b.WriteString("false")
			case word == "None":
				b.WriteString("null")
			default:
				b.WriteString(word)
			}
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func skipSpaceAndComments(s string, i int) int {
	n := len(s)
	for i < n {
		switch {
		case isSpace(s[i]):
			i++
		case s[i] == '/' && i+1 < n && s[i+1] == '/':
			for i < n && s[i] != '\n' {
				i++
			}
		case s[i] == '/' && i+1 < n && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return n
			}
			i += 2 + end + 2
		default:
			return i
		}
	}
	return i
}

// copyString writes the string literal starting at s[i] as a double-quoted JSON
// string and returns the index of its closing quote (or the last byte). Raw control
// characters are escaped, \' becomes a plain apostrophe, and a single quote closes a
// single-quoted string only where a JSON token may end (before , : } ] or the end),
// so that an apostrophe inside it ('it's') is kept.
func copyString(b *strings.Builder, s string, i int) int {
	const hex = "0123456789abcdef"
	q := s[i]
	b.WriteByte('"')
	n := len(s)
	for j := i + 1; j < n; j++ {
		c := s[j]
		switch {
		case c == '\\' && j+1 < n:
			if next := s[j+1]; next == '\'' {
				b.WriteByte('\'')
			} else {
				b.WriteByte('\\')
				b.WriteByte(next)
			}
			j++
		case c == q && (q == '"' || closesToken(s, j+1)):
			b.WriteByte('"')
			return j
		case c == '"': // a double quote inside a single-quoted string
			b.WriteString(`\"`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return n - 1
}

// closesToken reports whether s[i:] starts, after spaces, with a byte that may
// follow a JSON value or key, or is empty.
func closesToken(s string, i int) bool {
	for ; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
		case ',', ':', '}', ']':
			return true
		default:
			return false
		}
	}
	return true
}

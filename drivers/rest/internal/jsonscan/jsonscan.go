// Package jsonscan is the lexical part of the REST driver's fast JSON decoders
// (packages fastdoc and cachejson): white space, literals, numbers and strings
// validated as RFC 8259 and encoding/json accept them, over a byte slice, by
// index. Each function returns the index after what it read, or Fail.
package jsonscan

import "bytes"

// Fail is the index the functions return for input that is not valid JSON.
const Fail = -1

// MaxDepth is the nesting depth the standard library's decoder accepts.
const MaxDepth = 10000

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// WS returns the index of the first byte at or after i that is not white space.
func WS(d []byte, i int) int {
	for i < len(d) && IsSpace(d[i]) {
		i++
	}
	return i
}

// Literal reads lit (true, false or null) at i.
func Literal(d []byte, i int, lit string) int {
	if !bytes.HasPrefix(d[i:], []byte(lit)) {
		return Fail
	}
	return i + len(lit)
}

// Number validates a JSON number at i and returns the index after it and whether
// it is odd: a number that decoding into float64 and encoding again would change
// (a fraction, an exponent, more than 15 digits, or -0).
func Number(d []byte, i int) (int, bool) {
	start := i
	if d[i] == '-' {
		i++
	}
	digits := 0
	switch {
	case i < len(d) && d[i] == '0':
		i++
		digits++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
			digits++
		}
	default:
		return Fail, false
	}
	odd := false
	if i < len(d) && d[i] == '.' {
		odd = true
		i++
		n := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == n {
			return Fail, false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		odd = true
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		n := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == n {
			return Fail, false
		}
	}
	return i, odd || digits > 15 || (d[start] == '-' && digits == 1 && d[start+1] == '0')
}

// Str validates the string whose opening quote is at i; it returns the index
// after the closing quote and whether the string has escape sequences.
func Str(d []byte, i int) (end int, escaped bool) {
	for i++; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			i++
			if i >= len(d) {
				return Fail, escaped
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) {
					return Fail, escaped
				}
				for _, h := range d[i+1 : i+5] {
					if !HexDigit(h) {
						return Fail, escaped
					}
				}
				i += 4
			default:
				return Fail, escaped
			}
		case c < 0x20:
			return Fail, escaped
		}
	}
	return Fail, escaped
}

// HexDigit reports whether c is a hexadecimal digit.
func HexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

package csv

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// parseNumber reads a numeric cell: a decimal number with optional sign, fraction
// and exponent, surrounding spaces ignored. With decimalComma (files separated by
// ';' or tab, as written in much of Europe) "3,5" is 3.5 as well. NaN and
// infinities are not numbers here.
func parseNumber(s string, decimalComma bool) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || !plausibleNumber(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && decimalComma && strings.Count(s, ",") == 1 && !strings.Contains(s, ".") {
		f, err = strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	}
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// plausibleNumber rejects quickly what strconv would accept but a table does not
// mean as a number (hexadecimal, "inf", "nan", underscores): a number starts with a
// sign, a digit or a point, and holds only digits, signs, points, commas and e/E.
func plausibleNumber(s string) bool {
	c := s[0]
	if !(c >= '0' && c <= '9') && c != '-' && c != '+' && c != '.' {
		return false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == ',', c == 'e', c == 'E', c == '-', c == '+':
		default:
			return false
		}
	}
	return true
}

// isInteger reports whether s (trimmed) is an optionally signed run of digits.
func isInteger(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isBoolean(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no":
		return true
	}
	return false
}

func isDate(s string) bool {
	if len(s) < 10 || s[4] != '-' {
		return false
	}
	for _, layout := range [...]string{time.DateOnly, time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// columnType infers the type of one column from its cells, one at a time.
type columnType struct {
	values, empty                    int
	notInt, notNum, notBool, notDate bool
}

func (c *columnType) add(cell string, decimalComma bool) {
	s := strings.TrimSpace(cell)
	if s == "" {
		c.empty++
		return
	}
	c.values++
	if !c.notInt && !isInteger(s) {
		c.notInt = true
	}
	if c.notInt && !c.notNum {
		if _, ok := parseNumber(s, decimalComma); !ok {
			c.notNum = true
		}
	}
	if !c.notBool && !isBoolean(s) {
		c.notBool = true
	}
	if !c.notDate && !isDate(s) {
		c.notDate = true
	}
}

// name returns the inferred type: "empty" when no cell has a value, else the
// narrowest of "integer", "number", "boolean", "date" that fits every value,
// else "string".
func (c *columnType) name() string {
	switch {
	case c.values == 0:
		return "empty"
	case !c.notInt:
		return "integer"
	case !c.notNum:
		return "number"
	case !c.notBool:
		return "boolean"
	case !c.notDate:
		return "date"
	}
	return "string"
}

// stats accumulates summarize_numeric_column. The sum is compensated (Neumaier),
// so that adding many values keeps its precision.
type stats struct {
	count, nonNumeric, empty int
	sum, comp                float64
	min, max                 float64
	examples                 []string
}

func (s *stats) add(cell string, decimalComma bool) {
	v, ok := parseNumber(cell, decimalComma)
	if !ok {
		if strings.TrimSpace(cell) == "" {
			s.empty++
			return
		}
		s.nonNumeric++
		if len(s.examples) < 3 && len(cell) <= 100 {
			for _, e := range s.examples {
				if e == cell {
					return
				}
			}
			s.examples = append(s.examples, strings.Clone(cell))
		}
		return
	}
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if s.count == 0 || v > s.max {
		s.max = v
	}
	s.count++
	t := s.sum + v
	if math.Abs(s.sum) >= math.Abs(v) {
		s.comp += (s.sum - t) + v
	} else {
		s.comp += (v - t) + s.sum
	}
	s.sum = t
}

// total returns the compensated sum.
func (s *stats) total() float64 { return s.sum + s.comp }

package csv

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in           string
		decimalComma bool
		want         float64
		ok           bool
	}{
		{"42", false, 42, true},
		{" -3.5 ", false, -3.5, true},
		{"+7", false, 7, true},
		{"1e3", false, 1000, true},
		{".5", false, 0.5, true},
		{"1,5", false, 0, false},
		{"1,5", true, 1.5, true},
		{"1.234,5", true, 0, false},
		{"1,2,3", true, 0, false},
		{"", false, 0, false},
		{"NaN", false, 0, false},
		{"inf", false, 0, false},
		{"-Infinity", false, 0, false},
		{"0x10", false, 0, false},
		{"1_000", false, 0, false},
		{"1e999", false, 0, false},
		{"12abc", false, 0, false},
		{"€5", false, 0, false},
	}
	for _, tc := range tests {
		got, ok := parseNumber(tc.in, tc.decimalComma)
		if ok != tc.ok || got != tc.want {
			t.Errorf("parseNumber(%q, %t) = %v, %t; want %v, %t", tc.in, tc.decimalComma, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSniffDelimiter(t *testing.T) {
	tests := []struct {
		head     string
		tabFirst bool
		want     rune
	}{
		{"a,b,c\n1;2;3;4;5", false, ','},
		{"a;b;c\n", false, ';'},
		{"a\tb\n", false, '\t'},
		{`"x,y,z";b;c` + "\n", false, ';'},
		{"single\n", false, ','},
		{"single\n", true, '\t'},
		{"a\tb,c\n", false, ','},
		{"a\tb,c\n", true, '\t'},
		{"a;b,c\n", false, ','},
		{"a;b;c", false, ';'},
		{"", false, ','},
	}
	for _, tc := range tests {
		if got := sniffDelimiter([]byte(tc.head), tc.tabFirst); got != tc.want {
			t.Errorf("sniffDelimiter(%q, %t) = %q, want %q", tc.head, tc.tabFirst, got, tc.want)
		}
	}
}

func TestLatin1Reader(t *testing.T) {
	in := strings.Repeat("caf\xe9 \xfc\xdf\xff;", 5000)
	want := strings.Repeat("café üßÿ;", 5000)
	for name, r := range map[string]io.Reader{
		"whole":    &latin1Reader{r: strings.NewReader(in)},
		"one byte": &latin1Reader{r: iotest.OneByteReader(strings.NewReader(in))},
	} {
		b, err := io.ReadAll(r)
		if err != nil || string(b) != want {
			t.Errorf("%s: read %d bytes, %v; want the UTF-8 text", name, len(b), err)
		}
	}
	if n, err := (&latin1Reader{r: strings.NewReader("x")}).Read(make([]byte, 1)); n != 0 || err != io.ErrShortBuffer {
		t.Errorf("Read into one byte = %d, %v; want io.ErrShortBuffer", n, err)
	}
}

func TestColumnType(t *testing.T) {
	tests := []struct {
		cells []string
		want  string
	}{
		{nil, "empty"},
		{[]string{"", " "}, "empty"},
		{[]string{"1", "", "-2"}, "integer"},
		{[]string{"1", "2.5"}, "number"},
		{[]string{"true", "No"}, "boolean"},
		{[]string{"2024-02-29", "2024-03-01 10:00:00"}, "date"},
		{[]string{"2024-02-30"}, "string"},
		{[]string{"1", "x"}, "string"},
	}
	for _, tc := range tests {
		var c columnType
		for _, cell := range tc.cells {
			c.add(cell, false)
		}
		if got := c.name(); got != tc.want {
			t.Errorf("type of %q = %s, want %s", tc.cells, got, tc.want)
		}
	}
}

func TestStatsPrecision(t *testing.T) {
	var s stats
	s.add("1e16", false)
	for range 1000 {
		s.add("1", false)
	}
	s.add("-1e16", false)
	if got := s.total(); got != 1000 {
		t.Errorf("compensated sum = %v, want 1000", got)
	}
}

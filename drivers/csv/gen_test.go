package csv

import (
	"io"
	"math"
	"strconv"
)

// genReader produces a CSV file of about size bytes on the fly: an id, a name,
// a numeric amount (one cell in 500 is not a number) and a date.
type genReader struct {
	left int64
	row  int
	buf  []byte
}

func newGen(size int64) *genReader {
	return &genReader{left: size, buf: []byte("id,name,amount,date\n")}
}

func (g *genReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.buf) == 0 {
			if g.left <= 0 {
				break
			}
			g.row++
			b := g.buf[:0]
			b = strconv.AppendInt(b, int64(g.row), 10)
			b = append(b, ",customer "...)
			b = strconv.AppendInt(b, int64(g.row%977), 10)
			b = append(b, ',')
			if g.row%500 == 0 {
				b = append(b, "n/a"...)
			} else {
				b = strconv.AppendFloat(b, float64(g.row%10007)*1.25, 'f', 2, 64)
			}
			b = append(b, ",2025-01-15\n"...)
			g.buf = b
		}
		c := copy(p[n:], g.buf)
		n += c
		g.buf = g.buf[c:]
		g.left -= int64(c)
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// genStats returns what summarize_numeric_column must report on the "amount"
// column of the first rows rows of a generated file.
func genStats(rows int) (count, nonNumeric int, sum, min, max float64) {
	min, max = 1e300, -1e300
	for r := 1; r <= rows; r++ {
		if r%500 == 0 {
			nonNumeric++
			continue
		}
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(r%10007)*1.25, 'f', 2, 64), 64)
		count++
		sum += v
		min = math.Min(min, v)
		max = math.Max(max, v)
	}
	return
}

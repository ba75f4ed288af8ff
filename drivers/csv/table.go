package csv

import (
	"bufio"
	"bytes"
	"context"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcs-go/mcs/internal/textcut"
)

// Streaming bounds: whatever the file size, a table holds two read buffers and one
// record (at most maxRecordBytes, a few times over inside encoding/csv).
const (
	bufSize        = 64 << 10
	maxRecordBytes = 1 << 20
)

// maxColumns is the most columns a header may have: the tools keep a few hundred
// bytes per column, and a one-line file of a million empty fields would otherwise
// cost hundreds of megabytes.
const maxColumns = 10_000

// Encodings reported by describe_csv.
const (
	encUTF8    = "utf-8"
	encUTF8BOM = "utf-8 with BOM"
	encLatin1  = "latin-1"
)

// errRecordTooLarge is returned when one record exceeds maxRecordBytes.
var errRecordTooLarge = fmt.Errorf("a row is larger than %d MiB (an unclosed quote?); the file cannot be read safely", maxRecordBytes>>20)

// table streams the records of one CSV file. The header is read on open. A table is
// used by one goroutine.
type table struct {
	path     string // as shown to the model, for messages
	cr       *stdcsv.Reader
	guard    *guardReader
	header   []string // nil for an empty file
	delim    rune
	encoding string
	nextLine int // the line after the last record read: where the next one starts, or before
}

// newTable detects the encoding and the delimiter of r, and reads the header.
// tabFirst prefers tab on a tie (for .tsv files). The error explains a file that
// cannot be read (UTF-16, a row too large, too many columns, a syntax error).
func newTable(r io.Reader, tabFirst bool) (*table, error) {
	g := &guardReader{r: r, limit: maxRecordBytes + 2*bufSize}
	br := bufio.NewReaderSize(g, bufSize)
	peek, err := br.Peek(bufSize)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	t := &table{guard: g, encoding: encUTF8}
	switch {
	case bytes.HasPrefix(peek, []byte("\xef\xbb\xbf")):
		br.Discard(3)
		peek = peek[3:]
		t.encoding = encUTF8BOM
	case bytes.HasPrefix(peek, []byte("\xff\xfe")), bytes.HasPrefix(peek, []byte("\xfe\xff")):
		return nil, errors.New("the file is UTF-16 encoded; only UTF-8 (with or without BOM) and Latin-1 files can be read; convert it to UTF-8")
	}
	var src io.Reader = br
	if !utf8.Valid(textcut.TrimIncomplete(peek)) {
		t.encoding = encLatin1
		src = bufio.NewReaderSize(&latin1Reader{r: br}, bufSize)
	}
	t.delim = sniffDelimiter(peek, tabFirst)
	cr := stdcsv.NewReader(src)
	cr.Comma = t.delim
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	t.cr = cr
	header, err := t.next()
	switch {
	case err == io.EOF:
		return t, nil
	case err != nil:
		return nil, err
	}
	if len(header) > maxColumns {
		return nil, fmt.Errorf("the header has %d columns, more than the %d that can be read", len(header), maxColumns)
	}
	t.header = slices.Clone(header)
	return t, nil
}

// next returns the next record; the slice is reused by the following call. It
// returns io.EOF after the last record.
func (t *table) next() ([]string, error) {
	t.guard.reset()
	rec, err := t.cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, err
		}
		if errors.Is(err, errRecordTooLarge) {
			return nil, fmt.Errorf("line %d: %w", t.failedLine(), errRecordTooLarge)
		}
		return nil, fmt.Errorf("the file is not valid CSV: %w", err)
	}
	if n := len(rec); n > 0 {
		line, _ := t.cr.FieldPos(n - 1)
		t.nextLine = line + strings.Count(rec[n-1], "\n") + 1
	}
	return rec, nil
}

// failedLine returns the line where the record that failed to read starts. The
// reader knows it only when it got as far as a field (a quote left open in the
// first field of a record gives it none, and asking would panic): otherwise it is
// the line after the last record read.
func (t *table) failedLine() (line int) {
	defer func() {
		if recover() != nil {
			line = max(t.nextLine, 1)
		}
	}()
	line, _ = t.cr.FieldPos(0)
	return line
}

// each calls fn for every data row until fn returns false or the file ends; rec
// is reused by the next call. It checks ctx every ctxEvery rows.
func (t *table) each(ctx context.Context, fn func(rec []string) bool) error {
	for n := 1; ; n++ {
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
		}
		rec, err := t.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.path, err)
		}
		if !fn(rec) {
			return nil
		}
	}
}

// decimalComma reports whether numbers may use a decimal comma: in files whose
// fields are not separated by commas.
func (t *table) decimalComma() bool { return t.delim != ',' }

// column finds the index of name in the header: an exact match first, then a
// unique match ignoring case and surrounding spaces. The error lists the columns.
func (t *table) column(name string) (int, error) {
	if i := slices.Index(t.header, name); i >= 0 {
		return i, nil
	}
	found := -1
	for i, h := range t.header {
		if strings.EqualFold(strings.TrimSpace(h), strings.TrimSpace(name)) {
			if found >= 0 {
				found = -2
				break
			}
			found = i
		}
	}
	if found >= 0 {
		return found, nil
	}
	if len(t.header) == 0 {
		return 0, fmt.Errorf("unknown column %q: the file is empty and has no columns", echo(name))
	}
	return 0, fmt.Errorf("unknown column %q; the columns are: %s", echo(name), quoteNames(t.header))
}

// sniffDelimiter picks ',', ';' or tab: the one that occurs most often outside
// quotes in the first line of head. A tie, or no delimiter at all, gives ',', or
// tab when tabFirst is set.
func sniffDelimiter(head []byte, tabFirst bool) rune {
	var counts [3]int
	quoted := false
	for _, c := range head {
		switch c {
		case '"':
			quoted = !quoted
		case '\n':
			if !quoted {
				goto done
			}
		case ',':
			if !quoted {
				counts[0]++
			}
		case ';':
			if !quoted {
				counts[1]++
			}
		case '\t':
			if !quoted {
				counts[2]++
			}
		}
	}
done:
	order := []int{0, 1, 2}
	if tabFirst {
		order = []int{2, 0, 1}
	}
	best := order[0]
	for _, i := range order[1:] {
		if counts[i] > counts[best] {
			best = i
		}
	}
	return [...]rune{',', ';', '\t'}[best]
}

// guardReader counts the bytes read since the last reset and fails with
// errRecordTooLarge beyond limit, so that one enormous record cannot exhaust
// memory.
type guardReader struct {
	r     io.Reader
	n     int
	limit int
}

func (g *guardReader) Read(p []byte) (int, error) {
	if g.n > g.limit {
		return 0, errRecordTooLarge
	}
	n, err := g.r.Read(p)
	g.n += n
	return n, err
}

func (g *guardReader) reset() { g.n = 0 }

// latin1Reader decodes ISO-8859-1 into UTF-8. Each byte becomes at most two, so
// a read of len(p)/2 bytes always fits into p.
type latin1Reader struct {
	r   io.Reader
	raw []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	want := len(p) / 2
	if want == 0 {
		return 0, io.ErrShortBuffer
	}
	if cap(l.raw) < want {
		l.raw = make([]byte, want)
	}
	n, err := l.r.Read(l.raw[:want])
	out := p[:0]
	for _, c := range l.raw[:n] {
		if c < utf8.RuneSelf {
			out = append(out, c)
		} else {
			out = append(out, 0xc0|c>>6, 0x80|c&0x3f)
		}
	}
	return len(out), err
}

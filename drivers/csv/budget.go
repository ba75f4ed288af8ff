package csv

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcs-go/mcs/internal/textcut"
)

// The size of results.
//
// Every result of the driver takes at most maxResultBytes as JSON, whatever the
// file holds: a header of ten thousand long names, rows of a megabyte, text
// that grows sixfold when escaped ('<' is "\u003c"), paths of thousands of
// bytes. Each tool counts what it adds (rows, columns, sample rows, files) in
// JSON bytes, stops adding when the next piece would not fit and says so in
// the result's notice. Names echoed back (a column, a value, a path) are cut to
// maxEcho bytes. The remaining fields are small and fit in reserveBytes. As a
// last guard, ExecuteTool measures the result and replaces one that is still
// too large with a short result saying why (see capResult), and cuts an error
// message longer than maxErrorBytes.

const (
	// reserveBytes is kept for a result's fields besides its rows, columns,
	// sample and files: counts, echoes, notices.
	reserveBytes = 16 << 10
	// maxEcho is the most bytes of a name or value a result repeats.
	maxEcho = 1024
	// maxColumnBytes is the most the names of the columns take in a result
	// that also carries rows; the rows get the rest.
	maxColumnBytes = maxResultBytes / 4
	// maxErrorBytes is the longest error message a call returns.
	maxErrorBytes = 64 << 10
	// maxListedColumns is the most column names an error lists.
	maxListedColumns = 4 << 10
)

// mib is maxResultBytes in MiB, for notices.
const mib = maxResultBytes >> 20

// echo returns s cut to maxEcho bytes, marked when cut.
func echo(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return textcut.Prefix(s, maxEcho) + fmt.Sprintf("... (%d bytes in all)", len(s))
}

// fitColumns returns how many of the first names take at most limit bytes as
// the JSON array of a result.
func fitColumns(names []string, limit int) int {
	size := 2
	for i, n := range names {
		if size += jsonStringLen(n) + 1; size > limit {
			return i
		}
	}
	return len(names)
}

// cutRow returns rec without the cells from column k on when the header of
// width columns was cut to k; else rec as it is, cells past the header
// included.
func cutRow(rec []string, k, width int) []string {
	if k < width && len(rec) > k {
		return rec[:k]
	}
	return rec
}

// columnsNotice says that only k of n columns are shown.
func columnsNotice(k, n int) string {
	return fmt.Sprintf("only the first %d of the %d columns are shown: all of them would make the result larger than %d MiB", k, n, mib)
}

// quoteNames lists names quoted, at most maxListedColumns bytes of them, then
// how many were left out.
func quoteNames(names []string) string {
	var sb strings.Builder
	for i, n := range names {
		q := strconv.Quote(echo(n))
		if sb.Len()+len(q) > maxListedColumns {
			fmt.Fprintf(&sb, ", and %d more", len(names)-i)
			break
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(q)
	}
	return sb.String()
}

// capResult returns res when its JSON takes at most maxResultBytes, else a
// short result that says the result was too large and what to ask instead.
// The tools keep within the limit themselves; this is the last guard.
func capResult(tool string, res any) any {
	data, err := json.Marshal(res)
	if err != nil || len(data) <= maxResultBytes {
		return res
	}
	return map[string]any{
		"error":     fmt.Sprintf("the result of %s would take %d bytes, more than the limit of %d MiB", tool, len(data), mib),
		"truncated": true,
		"notice":    fmt.Sprintf("the result was left out: it would be larger than %d MiB; ask for fewer rows (limit) or read the file with another tool", mib),
	}
}

// cutError is an error whose message was cut to maxErrorBytes; it unwraps to
// the original.
type cutError struct {
	msg string
	err error
}

func (e *cutError) Error() string { return e.msg }
func (e *cutError) Unwrap() error { return e.err }

// capError cuts the message of err to maxErrorBytes.
func capError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if len(msg) <= maxErrorBytes {
		return err
	}
	return &cutError{msg: textcut.Prefix(msg, maxErrorBytes) + fmt.Sprintf("... (the message is cut: it has %d bytes)", len(msg)), err: err}
}

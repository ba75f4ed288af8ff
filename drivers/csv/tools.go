package csv

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/internal/tooltable"
)

// Limits of list_csv_files.
const (
	maxFiles  = 1000
	maxVisits = 100_000
)

// ctxEvery is how many records are read between two checks of the context.
const ctxEvery = 4096

// maxResultBytes bounds the cells that read_csv_head and filter_csv_rows return:
// no row is added once those returned hold that many bytes, so that long rows
// cannot make an enormous result whatever the row limit.
const maxResultBytes = 1 << 20

// cellBytes is the size of rec counted against maxResultBytes: its text and a
// readOnly are the behaviour hints of every tool (mcs.Tool.Annotations): the driver
// only reads files under its root, a closed domain.
var readOnly = &mcs.ToolAnnotations{ReadOnly: true, Idempotent: true}

// separator per cell.
func cellBytes(rec []string) int {
	n := len(rec)
	for _, c := range rec {
		n += len(c)
	}
	return n
}

type toolDef struct {
	tool mcs.Tool
	run  tooltable.Func[*ToolDriver]
}

func toolDefs(maxRows int) []*toolDef {
	pathParam := mcs.Parameter{Name: "path", Description: "CSV file path relative to the root, as list_csv_files reports it.", Required: true, Schema: map[string]any{"type": "string"}}
	columnParam := func(desc string) mcs.Parameter {
		return mcs.Parameter{Name: "column", Description: desc, Required: true, Schema: map[string]any{"type": "string"}}
	}
	limitParam := func(def int) mcs.Parameter {
		return mcs.Parameter{
			Name:        "limit",
			Description: fmt.Sprintf("Most rows to return (default %d); 0 means no limit other than the driver's maximum of %d rows.", def, maxRows),
			Schema:      map[string]any{"type": "integer", "minimum": 0},
		}
	}
	return []*toolDef{
		{
			tool: mcs.Tool{
				Name:        "list_csv_files",
				Annotations: readOnly,
				Title:       "List CSV files",
				Description: fmt.Sprintf("List the CSV files (.csv and .tsv) under the root, recursively, as paths relative to the root, sorted, with their size in bytes. At most %d files.", maxFiles),
			},
			run: (*ToolDriver).listFiles,
		},
		{
			tool: mcs.Tool{
				Name:        "describe_csv",
				Annotations: readOnly,
				Title:       "Describe a CSV file",
				Description: "Describe a CSV file: its delimiter and encoding, its columns with the type inferred from every value (integer, number, boolean, date, string, or empty), the number of data rows and the first 3 rows.",
				Parameters:  []mcs.Parameter{pathParam},
			},
			run: (*ToolDriver).describe,
		},
		{
			tool: mcs.Tool{
				Name:        "read_csv_head",
				Annotations: readOnly,
				Title:       "Read the first rows",
				Description: "Read the header and the first rows of a CSV file.",
				Parameters:  []mcs.Parameter{pathParam, limitParam(5)},
			},
			run: (*ToolDriver).readHead,
		},
		{
			tool: mcs.Tool{
				Name:        "filter_csv_rows",
				Annotations: readOnly,
				Title:       "Filter rows",
				Description: `Return the rows of a CSV file whose cell in a column matches a value, and the number of all matching rows. Operators: "eq" (the default: exact match, surrounding spaces ignored), "ne" (not equal), "contains" (substring, ignoring case), ` +
					`"gt" and "lt" (numeric comparison; cells that are not numbers never match).`,
				Parameters: []mcs.Parameter{
					pathParam,
					columnParam("Column name, as in the header."),
					{Name: "value", Description: "The value to compare each cell with.", Required: true, Schema: map[string]any{"type": []string{"string", "number", "boolean"}}},
					{Name: "operator", Description: `One of "eq", "ne", "contains", "gt", "lt".`, Schema: map[string]any{"type": "string", "enum": []any{"eq", "ne", "contains", "gt", "lt"}}},
					limitParam(20),
				},
			},
			run: (*ToolDriver).filterRows,
		},
		{
			tool: mcs.Tool{
				Name:        "summarize_numeric_column",
				Annotations: readOnly,
				Title:       "Summarize a numeric column",
				Description: "Compute count, min, max, mean and sum of the numeric values of a column over the whole file. Empty and non-numeric cells are counted and reported, not fatal.",
				Parameters:  []mcs.Parameter{pathParam, columnParam("Column name, as in the header.")},
			},
			run: (*ToolDriver).summarize,
		},
	}
}

// rowLimit returns the number of rows to return for the limit argument (def when
// absent; 0 means MaxRows) and whether the driver's maximum cut it.
func (d *ToolDriver) rowLimit(args map[string]any, def int) (n int, capped bool) {
	v := tooltable.Int(args, "limit", int64(def))
	most := int64(d.cfg.MaxRows)
	if v == 0 || v > most {
		return int(most), v > most
	}
	return int(v), false
}

// source is an open CSV file.
type source struct {
	*table
	f   *os.File
	col int // the index of the column argument in the header, when there is one
}

// open opens the file named by the path argument of args as a table and, when
// args hold a column argument, finds that column (source.col). When s is nil the
// tool ends with res and err: a result the model can read for a missing file, a
// directory or a path below a file, the failed call for any other error.
func (d *ToolDriver) open(args map[string]any) (s *source, res any, err error) {
	p := tooltable.String(args, "path", "")
	shown, err := d.root.Clean(p)
	if err != nil {
		return nil, nil, err
	}
	rel, err := d.root.Resolve(p)
	if err != nil {
		res, err = outcome(shown, err)
		return nil, res, err
	}
	f, _, err := d.root.OpenRegular(rel)
	if err != nil {
		res, err = outcome(shown, err)
		return nil, res, err
	}
	t, err := newTable(fileReader{f: f, root: d.root}, strings.EqualFold(path.Ext(rel), ".tsv"))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", shown, err)
	}
	t.path = shown
	s = &source{table: t, f: f}
	if name, ok := args["column"].(string); ok {
		if s.col, err = s.column(name); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return s, nil, nil
}

func (s *source) Close() error { return s.f.Close() }

// fileReader reads f; its errors show the path relative to the root, not the
// host path that f carries.
type fileReader struct {
	f    *os.File
	root *confine.Root
}

func (r fileReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	return n, r.root.HidePath(err)
}

func cell(rec []string, i int) string {
	if i < len(rec) {
		return rec[i]
	}
	return ""
}

func (d *ToolDriver) listFiles(ctx context.Context, _ map[string]any) (any, error) {
	files := []map[string]any{}
	visits := 0
	notice := ""
	err := fs.WalkDir(d.root.FS(), ".", func(name string, de fs.DirEntry, err error) error {
		if err != nil {
			if name == "." {
				return err
			}
			return nil // an unreadable directory: skip it
		}
		visits++
		if visits%256 == 0 {
			if err := ctx.Err(); err != nil {
				return context.Cause(ctx)
			}
		}
		if visits > d.limits.visits {
			notice = fmt.Sprintf("the listing stopped after looking at %d entries", d.limits.visits)
			return fs.SkipAll
		}
		if de.IsDir() {
			return nil
		}
		switch strings.ToLower(path.Ext(name)) {
		case ".csv", ".tsv":
		default:
			return nil
		}
		var size int64
		switch {
		case de.Type().IsRegular():
			info, err := de.Info()
			if err != nil {
				return nil
			}
			size = info.Size()
		case de.Type()&fs.ModeSymlink != 0:
			// A link is listed when it leads to a regular file inside the root.
			target, err := d.root.Resolve(name)
			if err != nil {
				return nil
			}
			info, err := d.root.Stat(target)
			if err != nil || !info.Mode().IsRegular() {
				return nil
			}
			size = info.Size()
		default:
			return nil
		}
		if len(files) == d.limits.files {
			notice = fmt.Sprintf("only the first %d files found are listed", d.limits.files)
			return fs.SkipAll
		}
		files = append(files, map[string]any{"path": name, "size": size})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list files: %w", d.root.HidePath(err))
	}
	slices.SortFunc(files, func(a, b map[string]any) int { return strings.Compare(a["path"].(string), b["path"].(string)) })
	res := map[string]any{"files": files, "count": len(files), "truncated": notice != ""}
	if notice != "" {
		res["notice"] = notice
	}
	return res, nil
}

var delimiterNames = map[rune]string{',': ",", ';': ";", '\t': "\t"}

func (d *ToolDriver) describe(ctx context.Context, args map[string]any) (any, error) {
	s, res, err := d.open(args)
	if s == nil {
		return res, err
	}
	defer s.Close()
	cols := make([]columnType, len(s.header))
	rows, ragged := 0, 0
	sample := [][]string{}
	dc := s.decimalComma()
	err = s.each(ctx, func(rec []string) bool {
		rows++
		if len(rec) != len(s.header) {
			ragged++
		}
		for i := range cols {
			cols[i].add(cell(rec, i), dc)
		}
		if len(sample) < 3 {
			sample = append(sample, slices.Clone(rec))
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	columns := make([]map[string]any, len(s.header))
	for i, name := range s.header {
		columns[i] = map[string]any{"name": name, "type": cols[i].name(), "empty": cols[i].empty}
	}
	out := map[string]any{
		"path":      s.path,
		"delimiter": delimiterNames[s.delim],
		"encoding":  s.encoding,
		"columns":   columns,
		"row_count": rows,
		"sample":    sample,
	}
	switch {
	case s.header == nil:
		out["notice"] = "the file is empty"
	case ragged > 0:
		out["ragged_rows"] = ragged
		out["notice"] = fmt.Sprintf("%d rows do not have the %d fields of the header", ragged, len(s.header))
	}
	return out, nil
}

func (d *ToolDriver) readHead(ctx context.Context, args map[string]any) (any, error) {
	limit, capped := d.rowLimit(args, 5)
	s, res, err := d.open(args)
	if s == nil {
		return res, err
	}
	defer s.Close()
	rows := [][]string{}
	more := false
	size := 0
	err = s.each(ctx, func(rec []string) bool {
		if len(rows) == limit || size >= maxResultBytes {
			more = true
			return false
		}
		rows = append(rows, slices.Clone(rec))
		size += cellBytes(rec)
		return true
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"path": s.path, "columns": headerOf(s), "rows": rows, "returned": len(rows), "truncated": more}
	var notes []string
	if capped {
		notes = append(notes, fmt.Sprintf("the limit was lowered to the maximum of %d rows", limit))
	}
	if more && size >= maxResultBytes {
		notes = append(notes, fmt.Sprintf("only %d rows are returned: they hold over %d MiB", len(rows), maxResultBytes>>20))
	}
	if len(notes) > 0 {
		out["notice"] = strings.Join(notes, "; ")
	}
	return out, nil
}

func headerOf(s *source) []string {
	if s.header == nil {
		return []string{}
	}
	return s.header
}

// matcher returns the predicate of a filter_csv_rows operator.
func matcher(op, value string, decimalComma bool) (func(cell string) (match, numeric bool), error) {
	want := strings.TrimSpace(value)
	switch op {
	case "eq", "=", "==":
		return func(c string) (bool, bool) { return strings.TrimSpace(c) == want, true }, nil
	case "ne", "!=", "<>":
		return func(c string) (bool, bool) { return strings.TrimSpace(c) != want, true }, nil
	case "contains":
		lw := strings.ToLower(value)
		return func(c string) (bool, bool) { return strings.Contains(strings.ToLower(c), lw), true }, nil
	case "gt", ">", "lt", "<":
		v, ok := parseNumber(value, true)
		if !ok {
			return nil, fmt.Errorf("operator %q compares numbers, and the value %q is not a number", op, value)
		}
		gt := op == "gt" || op == ">"
		return func(c string) (bool, bool) {
			x, ok := parseNumber(c, decimalComma)
			if !ok {
				return false, false
			}
			if gt {
				return x > v, true
			}
			return x < v, true
		}, nil
	}
	return nil, fmt.Errorf(`operator %q is not supported; use one of "eq", "ne", "contains", "gt", "lt"`, op)
}

func (d *ToolDriver) filterRows(ctx context.Context, args map[string]any) (any, error) {
	limit, capped := d.rowLimit(args, 20)
	op := strings.ToLower(strings.TrimSpace(tooltable.String(args, "operator", "eq")))
	value := tooltable.String(args, "value", "")
	if _, err := matcher(op, value, true); err != nil {
		return nil, err
	}
	s, res, err := d.open(args)
	if s == nil {
		return res, err
	}
	defer s.Close()
	match, _ := matcher(op, value, s.decimalComma())
	rows := [][]string{}
	total, scanned, skipped, size := 0, 0, 0, 0
	err = s.each(ctx, func(rec []string) bool {
		scanned++
		c := cell(rec, s.col)
		ok, numeric := match(c)
		if !numeric && strings.TrimSpace(c) != "" {
			skipped++
		}
		if !ok {
			return true
		}
		total++
		if len(rows) < limit && size < maxResultBytes {
			rows = append(rows, slices.Clone(rec))
			size += cellBytes(rec)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"path":          s.path,
		"column":        s.header[s.col],
		"operator":      op,
		"value":         value,
		"columns":       s.header,
		"rows":          rows,
		"returned":      len(rows),
		"total_matches": total,
		"rows_scanned":  scanned,
		"truncated":     total > len(rows),
	}
	var notes []string
	if skipped > 0 {
		out["non_numeric_skipped"] = skipped
		notes = append(notes, fmt.Sprintf("%d cells are not numbers and were not compared", skipped))
	}
	if capped {
		notes = append(notes, fmt.Sprintf("the limit was lowered to the maximum of %d rows", limit))
	}
	if size >= maxResultBytes && total > len(rows) {
		notes = append(notes, fmt.Sprintf("only %d matching rows are returned: they hold over %d MiB", len(rows), maxResultBytes>>20))
	}
	if len(notes) > 0 {
		out["notice"] = strings.Join(notes, "; ")
	}
	return out, nil
}

func (d *ToolDriver) summarize(ctx context.Context, args map[string]any) (any, error) {
	s, res, err := d.open(args)
	if s == nil {
		return res, err
	}
	defer s.Close()
	var st stats
	rows := 0
	dc := s.decimalComma()
	err = s.each(ctx, func(rec []string) bool {
		rows++
		st.add(cell(rec, s.col), dc)
		return true
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"path":        s.path,
		"column":      s.header[s.col],
		"rows":        rows,
		"count":       st.count,
		"non_numeric": st.nonNumeric,
		"empty":       st.empty,
		"min":         nil,
		"max":         nil,
		"mean":        nil,
		"sum":         nil,
	}
	if st.count > 0 {
		out["min"], out["max"] = st.min, st.max
		if sum := st.total(); !math.IsInf(sum, 0) && !math.IsNaN(sum) {
			out["sum"] = sum
			out["mean"] = sum / float64(st.count)
		} else {
			out["notice"] = "the sum exceeds the range of a 64-bit float"
		}
	}
	if len(st.examples) > 0 {
		out["non_numeric_examples"] = st.examples
	}
	return out, nil
}

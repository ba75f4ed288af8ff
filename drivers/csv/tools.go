package csv

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/tools"
)

// Limits of list_csv_files.
const (
	maxFiles  = 1000
	maxVisits = 100_000
)

// ctxEvery is how many records are read between two checks of the context.
const ctxEvery = 4096

// maxResultBytes bounds the rows that read_csv_head and filter_csv_rows return,
// counted as the JSON they take in the result: a row is only added when the rows
// with it stay within that many bytes, so that neither long rows nor rows of many
// empty cells can make an enormous result whatever the row limit.
const maxResultBytes = 1 << 20

// rowBytes is the size of rec in the JSON of a result: each cell as a quoted,
// escaped string (as encoding/json writes it, HTML escapes included), the commas
// between them, the brackets and the comma before the row.
func rowBytes(rec []string) int {
	n := 2 + len(rec) // "[", "]", a comma per cell (one of them before the row)
	for _, c := range rec {
		n += jsonStringLen(c)
	}
	return n
}

// jsonStringLen is the length of s encoded as a JSON string by encoding/json.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// toolDef is one tool of the driver and how it is registered as a typed tool.
type toolDef struct {
	name, title, desc string
	add               func(t *tools.Table, d *ToolDriver, def *toolDef, opts ...tools.ToolOption)
	opts              []tools.ToolOption
}

// typed registers run, a method of the driver, as the typed tool def.
func typed[In any](run func(*ToolDriver, context.Context, In) (any, error)) func(*tools.Table, *ToolDriver, *toolDef, ...tools.ToolOption) {
	return func(t *tools.Table, d *ToolDriver, def *toolDef, opts ...tools.ToolOption) {
		opts = append([]tools.ToolOption{tools.WithTitle(def.title),
			tools.WithAnnotations(mcs.ToolAnnotations{ReadOnly: true, Idempotent: true})}, opts...)
		tools.Add(t, def.name, def.desc, func(ctx context.Context, in In) (any, error) { return run(d, ctx, in) }, opts...)
	}
}

// The tools' arguments. Each exported field is a parameter (see package tools).
type (
	noArgs   struct{}
	fileArgs struct {
		Path string `json:"path" description:"CSV file path relative to the root, as list_csv_files reports it."`
	}
	headArgs struct {
		Path  string  `json:"path" description:"CSV file path relative to the root, as list_csv_files reports it."`
		Limit *uint64 `json:"limit,omitempty"`
	}
	filterArgs struct {
		Path     string    `json:"path" description:"CSV file path relative to the root, as list_csv_files reports it."`
		Column   string    `json:"column" description:"Column name, as in the header."`
		Value    cellValue `json:"value" description:"The value to compare each cell with."`
		Operator string    `json:"operator,omitempty" enum:"eq,ne,contains,gt,lt" description:"One of \"eq\", \"ne\", \"contains\", \"gt\", \"lt\"."`
		Limit    *uint64   `json:"limit,omitempty"`
	}
	columnArgs struct {
		Path   string `json:"path" description:"CSV file path relative to the root, as list_csv_files reports it."`
		Column string `json:"column" description:"Column name, as in the header."`
	}
)

// cellValue is a value to compare cells with: a string, or a number or boolean
// the model wrote without quotes, kept as its text.
type cellValue string

var (
	_ tools.Schemer    = cellValue("")
	_ json.Unmarshaler = (*cellValue)(nil)
)

// JSONSchema says that a cell value is a string, a number or a boolean.
func (cellValue) JSONSchema() map[string]any {
	return map[string]any{"type": []string{"string", "number", "boolean"}}
}

// UnmarshalJSON takes a string as it is, and a number or boolean as its JSON text.
func (v *cellValue) UnmarshalJSON(b []byte) error {
	var x any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&x); err != nil {
		return err
	}
	switch t := x.(type) {
	case string:
		*v = cellValue(t)
	case json.Number:
		*v = cellValue(t.String())
	case bool:
		*v = cellValue(strconv.FormatBool(t))
	default:
		return fmt.Errorf("want a string, number or boolean, got %s", jsonKind(x))
	}
	return nil
}

func jsonKind(x any) string {
	switch x.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", x)
}

func toolDefs(maxRows int) []*toolDef {
	limitDesc := func(def int) tools.ToolOption {
		return tools.WithParameterDescription("limit",
			fmt.Sprintf("Most rows to return (default %d); 0 means no limit other than the driver's maximum of %d rows.", def, maxRows))
	}
	return []*toolDef{
		{
			name:  "list_csv_files",
			title: "List CSV files",
			desc:  fmt.Sprintf("List the CSV files (.csv and .tsv) under the root, recursively, as paths relative to the root, sorted, with their size in bytes. At most %d files.", maxFiles),
			add:   typed((*ToolDriver).listFiles),
		},
		{
			name:  "describe_csv",
			title: "Describe a CSV file",
			desc:  "Describe a CSV file: its delimiter and encoding, its columns with the type inferred from every value (integer, number, boolean, date, string, or empty), the number of data rows and the first 3 rows.",
			add:   typed((*ToolDriver).describe),
		},
		{
			name:  "read_csv_head",
			title: "Read the first rows",
			desc:  "Read the header and the first rows of a CSV file.",
			add:   typed((*ToolDriver).readHead),
			opts:  []tools.ToolOption{limitDesc(5)},
		},
		{
			name:  "filter_csv_rows",
			title: "Filter rows",
			desc: `Return the rows of a CSV file whose cell in a column matches a value, and the number of all matching rows. Operators: "eq" (the default: exact match, surrounding spaces ignored), "ne" (not equal), "contains" (substring, ignoring case), ` +
				`"gt" and "lt" (numeric comparison; cells that are not numbers never match).`,
			add:  typed((*ToolDriver).filterRows),
			opts: []tools.ToolOption{limitDesc(20)},
		},
		{
			name:  "summarize_numeric_column",
			title: "Summarize a numeric column",
			desc:  "Compute count, min, max, mean and sum of the numeric values of a column over the whole file. Empty and non-numeric cells are counted and reported, not fatal.",
			add:   typed((*ToolDriver).summarize),
		},
	}
}

// rowLimit returns the number of rows to return for the limit argument (def when
// absent; 0 means MaxRows) and whether the driver's maximum cut it.
func (d *ToolDriver) rowLimit(limit *uint64, def int) (n int, capped bool) {
	v := uint64(def)
	if limit != nil {
		v = *limit
	}
	most := uint64(d.cfg.MaxRows)
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
func (d *ToolDriver) open(p string, column *string) (s *source, res any, err error) {
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
	if column != nil {
		if s.col, err = s.column(*column); err != nil {
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

func (d *ToolDriver) listFiles(ctx context.Context, _ noArgs) (any, error) {
	files := []map[string]any{}
	visits, size := 0, 2
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
		var fsize int64
		switch {
		case de.Type().IsRegular():
			info, err := de.Info()
			if err != nil {
				return nil
			}
			fsize = info.Size()
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
			fsize = info.Size()
		default:
			return nil
		}
		if len(files) == d.limits.files {
			notice = fmt.Sprintf("only the first %d files found are listed", d.limits.files)
			return fs.SkipAll
		}
		n := jsonStringLen(name) + len(`{"path":,"size":},`) + len(strconv.FormatInt(fsize, 10))
		if size+n > maxResultBytes-reserveBytes {
			notice = fmt.Sprintf("only the first %d files found are listed: with more the result would be larger than %d MiB", len(files), mib)
			return fs.SkipAll
		}
		size += n
		files = append(files, map[string]any{"path": name, "size": fsize})
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

func (d *ToolDriver) describe(ctx context.Context, args fileArgs) (any, error) {
	s, res, err := d.open(args.Path, nil)
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
	// The columns take at most half the result, the sample the rest.
	columns := make([]map[string]any, 0, len(s.header))
	size := 2
	for i, name := range s.header {
		typ := cols[i].name()
		n := jsonStringLen(name) + jsonStringLen(typ) + len(strconv.Itoa(cols[i].empty)) + len(`{"name":,"type":,"empty":},`)
		if size+n > maxResultBytes/2 {
			break
		}
		size += n
		columns = append(columns, map[string]any{"name": name, "type": typ, "empty": cols[i].empty})
	}
	k := len(columns)
	shown := [][]string{}
	longCells := false
	for _, rec := range sample {
		rec = cutRow(rec, k, len(s.header))
		for i, c := range rec {
			if e := echo(c); len(e) != len(c) {
				rec[i], longCells = e, true
			}
		}
		n := rowBytes(rec)
		if size+n > maxResultBytes-reserveBytes {
			break
		}
		size += n
		shown = append(shown, rec)
	}
	out := map[string]any{
		"path":      echo(s.path),
		"delimiter": delimiterNames[s.delim],
		"encoding":  s.encoding,
		"columns":   columns,
		"row_count": rows,
		"sample":    shown,
	}
	var notes []string
	switch {
	case s.header == nil:
		notes = append(notes, "the file is empty")
	case ragged > 0:
		out["ragged_rows"] = ragged
		notes = append(notes, fmt.Sprintf("%d rows do not have the %d fields of the header", ragged, len(s.header)))
	}
	if k < len(s.header) {
		out["column_count"] = len(s.header)
		notes = append(notes, fmt.Sprintf("only the first %d of the %d columns are described, and the sample rows are cut to them: all of them would make the result larger than %d MiB", k, len(s.header), mib))
	}
	if longCells {
		notes = append(notes, fmt.Sprintf("cells of the sample longer than %d bytes are cut", maxEcho))
	}
	if len(shown) < len(sample) {
		notes = append(notes, fmt.Sprintf("the sample has %d of the first %d rows: with the next one the result would be larger than %d MiB", len(shown), len(sample), mib))
	}
	if k < len(s.header) || len(shown) < len(sample) {
		out["truncated"] = true
	}
	if len(notes) > 0 {
		out["notice"] = strings.Join(notes, "; ")
	}
	return out, nil
}

func (d *ToolDriver) readHead(ctx context.Context, args headArgs) (any, error) {
	limit, capped := d.rowLimit(args.Limit, 5)
	s, res, err := d.open(args.Path, nil)
	if s == nil {
		return res, err
	}
	defer s.Close()
	header := headerOf(s)
	k := fitColumns(header, maxColumnBytes)
	rows := [][]string{}
	more := false
	size := reserveBytes + rowBytes(header[:k])
	full := false // the next row would take the result over maxResultBytes
	err = s.each(ctx, func(rec []string) bool {
		if len(rows) == limit {
			more = true
			return false
		}
		rec = cutRow(rec, k, len(header))
		n := rowBytes(rec)
		if size+n > maxResultBytes {
			more, full = true, true
			return false
		}
		rows = append(rows, slices.Clone(rec))
		size += n
		return true
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"path": echo(s.path), "columns": header[:k], "rows": rows, "returned": len(rows), "truncated": more || k < len(header)}
	var notes []string
	if k < len(header) {
		out["column_count"] = len(header)
		notes = append(notes, columnsNotice(k, len(header)))
	}
	if capped {
		notes = append(notes, fmt.Sprintf("the limit was lowered to the maximum of %d rows", limit))
	}
	if full {
		notes = append(notes, fmt.Sprintf("only %d rows are returned: with the next row the result would be larger than %d MiB", len(rows), maxResultBytes>>20))
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

func (d *ToolDriver) filterRows(ctx context.Context, args filterArgs) (any, error) {
	limit, capped := d.rowLimit(args.Limit, 20)
	op := strings.ToLower(strings.TrimSpace(cmp.Or(args.Operator, "eq")))
	value := string(args.Value)
	if _, err := matcher(op, value, true); err != nil {
		return nil, err
	}
	s, res, err := d.open(args.Path, &args.Column)
	if s == nil {
		return res, err
	}
	defer s.Close()
	match, _ := matcher(op, value, s.decimalComma())
	k := fitColumns(s.header, maxColumnBytes)
	rows := [][]string{}
	total, scanned, skipped, size := 0, 0, 0, reserveBytes+rowBytes(s.header[:k])
	full := false // a matching row was left out because the result would be too large
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
		if len(rows) < limit && !full {
			rec = cutRow(rec, k, len(s.header))
			if n := rowBytes(rec); size+n <= maxResultBytes {
				rows = append(rows, slices.Clone(rec))
				size += n
			} else {
				full = true // later rows are not added either: the rows stay in file order
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"path":          echo(s.path),
		"column":        echo(s.header[s.col]),
		"operator":      op,
		"value":         echo(value),
		"columns":       s.header[:k],
		"rows":          rows,
		"returned":      len(rows),
		"total_matches": total,
		"rows_scanned":  scanned,
		"truncated":     total > len(rows) || k < len(s.header),
	}
	var notes []string
	if k < len(s.header) {
		out["column_count"] = len(s.header)
		notes = append(notes, columnsNotice(k, len(s.header)))
	}
	if skipped > 0 {
		out["non_numeric_skipped"] = skipped
		notes = append(notes, fmt.Sprintf("%d cells are not numbers and were not compared", skipped))
	}
	if capped {
		notes = append(notes, fmt.Sprintf("the limit was lowered to the maximum of %d rows", limit))
	}
	if full {
		notes = append(notes, fmt.Sprintf("only %d matching rows are returned: with the next one the result would be larger than %d MiB", len(rows), maxResultBytes>>20))
	}
	if len(notes) > 0 {
		out["notice"] = strings.Join(notes, "; ")
	}
	return out, nil
}

func (d *ToolDriver) summarize(ctx context.Context, args columnArgs) (any, error) {
	s, res, err := d.open(args.Path, &args.Column)
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
		"path":        echo(s.path),
		"column":      echo(s.header[s.col]),
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

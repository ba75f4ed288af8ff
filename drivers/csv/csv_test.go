package csv_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/csv"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/internal/drivertest"
)

func newTD(t *testing.T, cfg csv.Config) *csv.ToolDriver {
	t.Helper()
	return drivertest.Open(t, csv.NewToolDriver, cfg)
}

// rows builds the JSON form of rows.
func rows(rs ...[]string) []any {
	out := []any{}
	for _, r := range rs {
		row := []any{}
		for _, c := range r {
			row = append(row, c)
		}
		out = append(out, row)
	}
	return out
}

func strs(s ...string) []any {
	out := []any{}
	for _, x := range s {
		out = append(out, x)
	}
	return out
}

func TestNewErrors(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"f.csv": "a\n"})
	tests := []struct {
		cfg  csv.Config
		want string
	}{
		{csv.Config{}, "root directory is not set"},
		{csv.Config{Root: filepath.Join(dir, "missing")}, "no such file"},
		{csv.Config{Root: filepath.Join(dir, "f.csv")}, "not a directory"},
		{csv.Config{Root: dir, MaxRows: -5}, "MaxRows is -5"},
	}
	for _, tc := range tests {
		if _, err := csv.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) error = %v, want it to contain %q", tc.cfg, err, tc.want)
		}
	}
}

func TestMetaAndTools(t *testing.T) {
	cfg := csv.Config{Root: t.TempDir()}
	td := newTD(t, cfg)
	drivertest.CheckMeta(t, td, drivertest.OpenDriver(t, csv.New, cfg), mcs.Meta{
		ID:       "mcs-go/csv",
		Name:     "CSV files",
		Version:  "0.1.0",
		Bindings: []mcs.Binding{{Capability: "csv", Adapter: "os", SpecFormat: "builtin"}},
	})
	drivertest.CheckTools(t, td, []string{"list_csv_files", "describe_csv", "read_csv_head", "filter_csv_rows", "summarize_numeric_column"})
	if has, _ := td.HasTool(context.Background(), "read_file"); has {
		t.Error("HasTool(read_file) = true")
	}
	if _, err := td.ExecuteTool(context.Background(), "read_file", nil); err == nil || !strings.Contains(err.Error(), `unknown tool "read_file"; the tools are: list_csv_files, describe_csv`) {
		t.Errorf("unknown tool error = %v", err)
	}
}

func TestArguments(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"d.csv": "n,v\na,1\nb,2\nc,3\n"})
	td := newTD(t, csv.Config{Root: dir})
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		wantErr string
		check   func(map[string]any) bool
	}{
		{name: "no arguments for list", tool: "list_csv_files", args: map[string]any{"path": "."}, wantErr: `list_csv_files: invalid arguments: /path: unknown argument; the tool takes no arguments`},
		{name: "missing path", tool: "describe_csv", args: map[string]any{}, wantErr: `describe_csv: invalid arguments: /path: missing required argument (want string)`},
		{name: "limit text", tool: "read_csv_head", args: map[string]any{"path": "d.csv", "limit": "many"}, wantErr: `/limit: want integer, got string "many"`},
		{name: "limit negative", tool: "read_csv_head", args: map[string]any{"path": "d.csv", "limit": -2.0}, wantErr: `/limit: want integer >= 0, got number -2`},
		{name: "limit quoted", tool: "read_csv_head", args: map[string]any{"path": "d.csv", "limit": "1"}, check: func(m map[string]any) bool { return m["returned"] == 1.0 }},
		{name: "value number", tool: "filter_csv_rows", args: map[string]any{"path": "d.csv", "column": "v", "value": 2.0}, check: func(m map[string]any) bool { return m["total_matches"] == 1.0 && m["value"] == "2" }},
		{name: "value boolean", tool: "filter_csv_rows", args: map[string]any{"path": "d.csv", "column": "v", "value": true}, check: func(m map[string]any) bool { return m["total_matches"] == 0.0 && m["value"] == "true" }},
		{name: "value object", tool: "filter_csv_rows", args: map[string]any{"path": "d.csv", "column": "v", "value": map[string]any{}}, wantErr: `/value: want a string, number or boolean, got an object`},
		{name: "missing value", tool: "filter_csv_rows", args: map[string]any{"path": "d.csv", "column": "v"}, wantErr: `filter_csv_rows: invalid arguments: /value: missing required argument (want string or number or boolean)`},
		{name: "column number", tool: "summarize_numeric_column", args: map[string]any{"path": "d.csv", "column": 1.0}, wantErr: `/column: want string, got number 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := drivertest.Expect(t, td, tc.tool, tc.args, nil, tc.wantErr)
			if ok && !tc.check(got) {
				t.Errorf("unexpected result %v", got)
			}
		})
	}
}

func TestListCSVFiles(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		"b.csv":       "x\n",
		"A.TSV":       "x\ty\n",
		"a/c.csv":     "x\n1\n",
		"a.csv":       "xy\n",
		"notes.txt":   "not csv",
		"folder.csv/": "",
		"é/ü.csv":     "",
	})
	outside := confinetest.Tree(t, map[string]string{"secret.csv": "s\n"})
	for name, target := range map[string]string{"in.csv": "b.csv", "out.csv": filepath.Join(outside, "secret.csv"), "dir.csv": "a"} {
		confinetest.Symlink(t, dir, name, target)
	}
	td := newTD(t, csv.Config{Root: dir})
	want := map[string]any{
		"count":     6.0,
		"truncated": false,
		"files": []any{
			map[string]any{"path": "A.TSV", "size": 4.0},
			map[string]any{"path": "a.csv", "size": 3.0},
			map[string]any{"path": "a/c.csv", "size": 4.0},
			map[string]any{"path": "b.csv", "size": 2.0},
			map[string]any{"path": "in.csv", "size": 2.0},
			map[string]any{"path": "é/ü.csv", "size": 0.0},
		},
	}
	if diff := cmp.Diff(want, drivertest.MustCall(t, td, "list_csv_files", nil)); diff != "" {
		t.Errorf("list_csv_files (-want +got):\n%s", diff)
	}

	csv.SetLimits(td, 2, 1000)
	got := drivertest.MustCall(t, td, "list_csv_files", map[string]any{})
	if got["count"] != 2.0 || got["truncated"] != true || got["notice"] != "only the first 2 files found are listed" {
		t.Errorf("with a limit of 2 files: %v", got)
	}
	csv.SetLimits(td, 1000, 3)
	got = drivertest.MustCall(t, td, "list_csv_files", map[string]any{})
	if got["truncated"] != true || got["notice"] != "the listing stopped after looking at 3 entries" {
		t.Errorf("with a limit of 3 visits: %v", got)
	}
}

func TestDescribe(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		"types.csv":  "id,price,active,day,name,blank\n1,2.5,true,2025-01-02,Ann,\n2,3,no,2025-02-03,Bob,\n-3,1e3,yes,2025-03-04T10:00:00Z,Cy,\n",
		"semi.csv":   "name;amount\nA;1,5\nB;2\n",
		"tab.tsv":    "a\tb\n1\tx\n",
		"tie.tsv":    "name\tnote, long\nA\tx, y\n",
		"tie.csv":    "name\tnote, long\nA\tx, y\n",
		"bom.csv":    "\xef\xbb\xbfid,name\n1,x\n",
		"latin1.csv": "name,city\nJos\xe9,M\xfcnchen\n",
		"empty.csv":  "",
		"header.csv": "a,b,c\n",
		"ragged.csv": "a,b\n1\n1,2,3\n4,5\n",
		"quoted.csv": "id,text\n1,\"line one\nline two\"\n2,\"with \"\"quotes\"\", and comma\"\n",
		"crlf.csv":   "a,b\r\n1,2\r\n3,4\r\n",
		"utf8.csv":   "ville,prix\nZürich,12\n東京,7\n",
		"lazy.csv":   "a,b\n1,x\"y\n",
		"comma.csv":  "\"a;b\",c,d\n1,2,3\n",
		"blank.csv":  "a,b\n\n1,2\n\n",
	})
	td := newTD(t, csv.Config{Root: dir})
	col := func(name, typ string, empty float64) map[string]any {
		return map[string]any{"name": name, "type": typ, "empty": empty}
	}
	tests := []struct {
		path string
		want map[string]any
	}{
		{"types.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 3.0,
			"columns": []any{col("id", "integer", 0), col("price", "number", 0), col("active", "boolean", 0), col("day", "date", 0), col("name", "string", 0), col("blank", "empty", 3)},
			"sample":  rows([]string{"1", "2.5", "true", "2025-01-02", "Ann", ""}, []string{"2", "3", "no", "2025-02-03", "Bob", ""}, []string{"-3", "1e3", "yes", "2025-03-04T10:00:00Z", "Cy", ""}),
		}},
		{"semi.csv", map[string]any{
			"delimiter": ";", "encoding": "utf-8", "row_count": 2.0,
			"columns": []any{col("name", "string", 0), col("amount", "number", 0)},
			"sample":  rows([]string{"A", "1,5"}, []string{"B", "2"}),
		}},
		{"tab.tsv", map[string]any{
			"delimiter": "\t", "encoding": "utf-8", "row_count": 1.0,
			"columns": []any{col("a", "integer", 0), col("b", "string", 0)},
			"sample":  rows([]string{"1", "x"}),
		}},
		{"tie.tsv", map[string]any{
			"delimiter": "\t", "encoding": "utf-8", "row_count": 1.0,
			"columns": []any{col("name", "string", 0), col("note, long", "string", 0)},
			"sample":  rows([]string{"A", "x, y"}),
		}},
		{"tie.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 1.0,
			"columns": []any{col("name\tnote", "string", 0), col(" long", "string", 0)},
			"sample":  rows([]string{"A\tx", " y"}),
		}},
		{"bom.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8 with BOM", "row_count": 1.0,
			"columns": []any{col("id", "integer", 0), col("name", "string", 0)},
			"sample":  rows([]string{"1", "x"}),
		}},
		{"latin1.csv", map[string]any{
			"delimiter": ",", "encoding": "latin-1", "row_count": 1.0,
			"columns": []any{col("name", "string", 0), col("city", "string", 0)},
			"sample":  rows([]string{"José", "München"}),
		}},
		{"empty.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 0.0,
			"columns": []any{}, "sample": []any{}, "notice": "the file is empty",
		}},
		{"header.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 0.0,
			"columns": []any{col("a", "empty", 0), col("b", "empty", 0), col("c", "empty", 0)},
			"sample":  []any{},
		}},
		{"ragged.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 3.0,
			"columns":     []any{col("a", "integer", 0), col("b", "integer", 1)},
			"sample":      rows([]string{"1"}, []string{"1", "2", "3"}, []string{"4", "5"}),
			"ragged_rows": 2.0, "notice": "2 rows do not have the 2 fields of the header",
		}},
		{"quoted.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 2.0,
			"columns": []any{col("id", "integer", 0), col("text", "string", 0)},
			"sample":  rows([]string{"1", "line one\nline two"}, []string{"2", `with "quotes", and comma`}),
		}},
		{"crlf.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 2.0,
			"columns": []any{col("a", "integer", 0), col("b", "integer", 0)},
			"sample":  rows([]string{"1", "2"}, []string{"3", "4"}),
		}},
		{"utf8.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 2.0,
			"columns": []any{col("ville", "string", 0), col("prix", "integer", 0)},
			"sample":  rows([]string{"Zürich", "12"}, []string{"東京", "7"}),
		}},
		{"lazy.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 1.0,
			"columns": []any{col("a", "integer", 0), col("b", "string", 0)},
			"sample":  rows([]string{"1", `x"y`}),
		}},
		{"comma.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 1.0,
			"columns": []any{col("a;b", "integer", 0), col("c", "integer", 0), col("d", "integer", 0)},
			"sample":  rows([]string{"1", "2", "3"}),
		}},
		{"blank.csv", map[string]any{
			"delimiter": ",", "encoding": "utf-8", "row_count": 1.0,
			"columns": []any{col("a", "integer", 0), col("b", "integer", 0)},
			"sample":  rows([]string{"1", "2"}),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			tc.want["path"] = tc.path
			got := drivertest.MustCall(t, td, "describe_csv", map[string]any{"path": tc.path})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("describe_csv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnreadableFiles(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		"utf16.csv": "\xff\xfea\x00,\x00b\x00\n\x00",
		"huge.csv":  "a,b\n1,\"" + strings.Repeat("x", 2<<20) + "\n",
		"wide.csv":  strings.Repeat("c,", 10_000) + "c\n1\n",
	})
	td := newTD(t, csv.Config{Root: dir})
	tests := []struct{ path, want string }{
		{"utf16.csv", "describe_csv: utf16.csv: the file is UTF-16 encoded; only UTF-8 (with or without BOM) and Latin-1 files can be read; convert it to UTF-8"},
		{"huge.csv", "describe_csv: huge.csv: line 2: a row is larger than 1 MiB (an unclosed quote?); the file cannot be read safely"},
		{"wide.csv", "describe_csv: wide.csv: the header has 10001 columns, more than the 10000 that can be read"},
	}
	for _, tc := range tests {
		_, err := drivertest.Call(t, td, "describe_csv", map[string]any{"path": tc.path})
		if err == nil || err.Error() != tc.want {
			t.Errorf("describe_csv(%s) error = %v, want %q", tc.path, err, tc.want)
		}
	}
}

func TestReadHead(t *testing.T) {
	var b strings.Builder
	b.WriteString("n,sq\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "%d,%d\n", i, i*i)
	}
	dir := confinetest.Tree(t, map[string]string{"sq.csv": b.String(), "header.csv": "a,b\n", "empty.csv": ""})
	td := newTD(t, csv.Config{Root: dir, MaxRows: 6})
	sq := func(from, to int) []any {
		var rs [][]string
		for i := from; i <= to; i++ {
			rs = append(rs, []string{fmt.Sprint(i), fmt.Sprint(i * i)})
		}
		return rows(rs...)
	}
	tests := []struct {
		name string
		args map[string]any
		want map[string]any
	}{
		{"default five", map[string]any{"path": "sq.csv"}, map[string]any{"path": "sq.csv", "columns": strs("n", "sq"), "rows": sq(1, 5), "returned": 5.0, "truncated": true}},
		{"two", map[string]any{"path": "sq.csv", "limit": 2.0}, map[string]any{"path": "sq.csv", "columns": strs("n", "sq"), "rows": sq(1, 2), "returned": 2.0, "truncated": true}},
		{"zero means the maximum", map[string]any{"path": "sq.csv", "limit": 0.0}, map[string]any{"path": "sq.csv", "columns": strs("n", "sq"), "rows": sq(1, 6), "returned": 6.0, "truncated": true}},
		{"capped", map[string]any{"path": "sq.csv", "limit": 100.0}, map[string]any{"path": "sq.csv", "columns": strs("n", "sq"), "rows": sq(1, 6), "returned": 6.0, "truncated": true, "notice": "the limit was lowered to the maximum of 6 rows"}},
		{"header only", map[string]any{"path": "header.csv"}, map[string]any{"path": "header.csv", "columns": strs("a", "b"), "rows": []any{}, "returned": 0.0, "truncated": false}},
		{"empty", map[string]any{"path": "empty.csv"}, map[string]any{"path": "empty.csv", "columns": []any{}, "rows": []any{}, "returned": 0.0, "truncated": false}},
		{"not found", map[string]any{"path": "nope.csv"}, map[string]any{"path": "nope.csv", "error": "not found", "hint": "call list_csv_files to see the CSV files"}},
		{"directory", map[string]any{"path": "."}, map[string]any{"path": ".", "error": "is a directory", "hint": "call list_csv_files to see the CSV files"}},
		{"below a file", map[string]any{"path": "sq.csv/x.csv"}, map[string]any{"path": "sq.csv/x.csv", "error": "not a directory", "hint": "an element of the path is a file, not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := drivertest.MustCall(t, td, "read_csv_head", tc.args)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read_csv_head (-want +got):\n%s", diff)
			}
		})
	}
	td8 := newTD(t, csv.Config{Root: dir})
	if got := drivertest.MustCall(t, td8, "read_csv_head", map[string]any{"path": "sq.csv", "limit": 8.0}); got["returned"] != 8.0 || got["truncated"] != false {
		t.Errorf("reading exactly all rows: returned %v, truncated %v", got["returned"], got["truncated"])
	}
}

// TestLongRows reads a file of rows of 300 KiB: the rows returned stop before the
// result would pass 1 MiB, whatever the limit, and the result says so.
func TestLongRows(t *testing.T) {
	long := strings.Repeat("x", 300<<10)
	var b strings.Builder
	b.WriteString("k,text\n")
	for range 10 {
		b.WriteString("a," + long + "\n")
	}
	dir := confinetest.Tree(t, map[string]string{"long.csv": b.String()})
	td := newTD(t, csv.Config{Root: dir})
	tests := []struct {
		tool   string
		args   map[string]any
		notice string
	}{
		{"read_csv_head", map[string]any{"path": "long.csv", "limit": 0.0}, "only 3 rows are returned: with the next row the result would be larger than 1 MiB"},
		{"filter_csv_rows", map[string]any{"path": "long.csv", "column": "k", "value": "a", "limit": 0.0}, "only 3 matching rows are returned: with the next one the result would be larger than 1 MiB"},
	}
	for _, tc := range tests {
		got := drivertest.MustCall(t, td, tc.tool, tc.args)
		if got["returned"] != 3.0 || got["truncated"] != true || got["notice"] != tc.notice {
			t.Errorf("%s: returned %v, truncated %v, notice %q; want 3, true, %q", tc.tool, got["returned"], got["truncated"], got["notice"], tc.notice)
		}
	}
	got := drivertest.MustCall(t, td, "filter_csv_rows", map[string]any{"path": "long.csv", "column": "k", "value": "a"})
	if got["total_matches"] != 10.0 {
		t.Errorf("total_matches = %v, want 10", got["total_matches"])
	}
}

func TestFilterRows(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		"p.csv":    "name,city,age\nAnn,Paris,31\nBob, Lyon ,25\nCyd,PARIS,n/a\nDan,Nice,40\nEve,Paris,\nFay,Lyon,19\n",
		"semi.csv": "name;amount\nA;1,5\nB;2,25\nC;0,5\n",
	})
	td := newTD(t, csv.Config{Root: dir})
	names := func(m map[string]any) []string {
		var out []string
		for _, r := range m["rows"].([]any) {
			out = append(out, r.([]any)[0].(string))
		}
		return out
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    []string
		total   float64
		skipped float64
		wantErr string
	}{
		{name: "eq default", args: map[string]any{"column": "city", "value": "Paris"}, want: []string{"Ann", "Eve"}, total: 2},
		{name: "eq ignores spaces", args: map[string]any{"column": "city", "value": "Lyon"}, want: []string{"Bob", "Fay"}, total: 2},
		{name: "eq alias", args: map[string]any{"column": "city", "value": "Nice", "operator": "=="}, want: []string{"Dan"}, total: 1},
		{name: "ne", args: map[string]any{"column": "city", "value": "Paris", "operator": "ne"}, want: []string{"Bob", "Cyd", "Dan", "Fay"}, total: 4},
		{name: "contains ignores case", args: map[string]any{"column": "city", "value": "par", "operator": "contains"}, want: []string{"Ann", "Cyd", "Eve"}, total: 3},
		{name: "gt", args: map[string]any{"column": "age", "value": 30.0, "operator": "gt"}, want: []string{"Ann", "Dan"}, total: 2, skipped: 1},
		{name: "lt", args: map[string]any{"column": "age", "value": "25.5", "operator": "LT"}, want: []string{"Bob", "Fay"}, total: 2, skipped: 1},
		{name: "limit", args: map[string]any{"column": "city", "value": "Paris", "operator": "ne", "limit": 2.0}, want: []string{"Bob", "Cyd"}, total: 4},
		{name: "no match", args: map[string]any{"column": "city", "value": "Rome"}, want: nil, total: 0},
		{name: "column ignoring case", args: map[string]any{"column": " CITY ", "value": "Nice"}, want: []string{"Dan"}, total: 1},
		{name: "decimal comma", args: map[string]any{"path": "semi.csv", "column": "amount", "value": "1", "operator": "gt"}, want: []string{"A", "B"}, total: 2},
		{name: "unknown column", args: map[string]any{"column": "town", "value": "x"}, wantErr: `filter_csv_rows: unknown column "town"; the columns are: "name", "city", "age"`},
		{name: "gt on text", args: map[string]any{"column": "age", "value": "old", "operator": "gt"}, wantErr: `operator "gt" compares numbers, and the value "old" is not a number`},
		{name: "bad operator", args: map[string]any{"column": "age", "value": "1", "operator": "like"}, wantErr: `operator "like" is not supported; use one of "eq", "ne", "contains", "gt", "lt"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.args["path"] == nil {
				tc.args["path"] = "p.csv"
			}
			got, ok := drivertest.Expect(t, td, "filter_csv_rows", tc.args, nil, tc.wantErr)
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, names(got)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if got["total_matches"] != tc.total || got["returned"] != float64(len(tc.want)) || got["truncated"] != (tc.total > float64(len(tc.want))) {
				t.Errorf("total %v, returned %v, truncated %v", got["total_matches"], got["returned"], got["truncated"])
			}
			skipped, _ := got["non_numeric_skipped"].(float64)
			if skipped != tc.skipped {
				t.Errorf("non_numeric_skipped = %v, want %v", skipped, tc.skipped)
			}
		})
	}
	got := drivertest.MustCall(t, td, "filter_csv_rows", map[string]any{"path": "p.csv", "column": "name", "value": "Bob"})
	want := map[string]any{
		"path": "p.csv", "column": "name", "operator": "eq", "value": "Bob",
		"columns": strs("name", "city", "age"), "rows": rows([]string{"Bob", " Lyon ", "25"}),
		"returned": 1.0, "total_matches": 1.0, "rows_scanned": 6.0, "truncated": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("filter_csv_rows (-want +got):\n%s", diff)
	}
}

func TestSummarize(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		"s.csv":     "item,price,qty\na,1.5,2\nb,n/a,3\nc,,1\nd, 2.5 ,x\ne,-4,\nf,N/A\ng,1e1,5\n",
		"semi.csv":  "x;v\na;1,5\nb;2,5\n",
		"text.csv":  "name\nAnn\nBob\nAnn\nCy\nDo\n",
		"huge.csv":  "v\n1e308\n1e308\n",
		"noval.csv": "v\n",
	})
	td := newTD(t, csv.Config{Root: dir})
	tests := []struct {
		name    string
		args    map[string]any
		want    map[string]any
		wantErr string
	}{
		{name: "mixed", args: map[string]any{"path": "s.csv", "column": "price"}, want: map[string]any{
			"path": "s.csv", "column": "price", "rows": 7.0, "count": 4.0, "non_numeric": 2.0, "empty": 1.0,
			"min": -4.0, "max": 10.0, "sum": 10.0, "mean": 2.5, "non_numeric_examples": strs("n/a", "N/A"),
		}},
		{name: "ragged rows count as empty", args: map[string]any{"path": "s.csv", "column": "qty"}, want: map[string]any{
			"path": "s.csv", "column": "qty", "rows": 7.0, "count": 4.0, "non_numeric": 1.0, "empty": 2.0,
			"min": 1.0, "max": 5.0, "sum": 11.0, "mean": 2.75, "non_numeric_examples": strs("x"),
		}},
		{name: "decimal comma", args: map[string]any{"path": "semi.csv", "column": "v"}, want: map[string]any{
			"path": "semi.csv", "column": "v", "rows": 2.0, "count": 2.0, "non_numeric": 0.0, "empty": 0.0,
			"min": 1.5, "max": 2.5, "sum": 4.0, "mean": 2.0,
		}},
		{name: "no numbers", args: map[string]any{"path": "text.csv", "column": "name"}, want: map[string]any{
			"path": "text.csv", "column": "name", "rows": 5.0, "count": 0.0, "non_numeric": 5.0, "empty": 0.0,
			"min": nil, "max": nil, "sum": nil, "mean": nil, "non_numeric_examples": strs("Ann", "Bob", "Cy"),
		}},
		{name: "header only", args: map[string]any{"path": "noval.csv", "column": "v"}, want: map[string]any{
			"path": "noval.csv", "column": "v", "rows": 0.0, "count": 0.0, "non_numeric": 0.0, "empty": 0.0,
			"min": nil, "max": nil, "sum": nil, "mean": nil,
		}},
		{name: "overflow", args: map[string]any{"path": "huge.csv", "column": "v"}, want: map[string]any{
			"path": "huge.csv", "column": "v", "rows": 2.0, "count": 2.0, "non_numeric": 0.0, "empty": 0.0,
			"min": 1e308, "max": 1e308, "sum": nil, "mean": nil, "notice": "the sum exceeds the range of a 64-bit float",
		}},
		{name: "unknown column", args: map[string]any{"path": "s.csv", "column": "cost"}, wantErr: `unknown column "cost"; the columns are: "item", "price", "qty"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			drivertest.Expect(t, td, "summarize_numeric_column", tc.args, tc.want, tc.wantErr)
		})
	}
}

func TestSummarizeLargeFile(t *testing.T) {
	dir := t.TempDir()
	writeGenerated(t, dir, "big.csv", 2<<20)
	td := newTD(t, csv.Config{Root: dir})
	got := drivertest.MustCall(t, td, "summarize_numeric_column", map[string]any{"path": "big.csv", "column": "amount"})
	rowsN := got["rows"].(float64)
	if rowsN < 50_000 || got["count"].(float64)+got["non_numeric"].(float64) != rowsN || got["non_numeric"].(float64) != float64(int(rowsN)/500) {
		t.Errorf("summary of a generated file: %v", got)
	}
}

// pathCalls are the calls of every tool with the model-supplied path p.
func pathCalls(p string) []drivertest.ToolCall {
	return []drivertest.ToolCall{
		{Tool: "describe_csv", Args: map[string]any{"path": p}},
		{Tool: "read_csv_head", Args: map[string]any{"path": p}},
		{Tool: "filter_csv_rows", Args: map[string]any{"path": p, "column": "name", "value": confinetest.Secret}},
		{Tool: "summarize_numeric_column", Args: map[string]any{"path": p, "column": "value"}},
	}
}

func TestEscapeSuite(t *testing.T) {
	env := confinetest.New(t)
	td := newTD(t, csv.Config{Root: env.Root})
	if got := drivertest.MustCall(t, td, "read_csv_head", map[string]any{"path": "swap/ok.csv"}); got["returned"] != 1.0 {
		t.Fatalf("read swap/ok.csv before the swap: %v", got)
	}
	drivertest.RunEscapeSuite(t, env, td, pathCalls)
	// Listing never shows a file outside the root.
	b, err := json.Marshal(drivertest.MustCall(t, td, "list_csv_files", nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "secret") || strings.Contains(string(b), env.Base) {
		t.Errorf("list_csv_files shows a file outside the root: %s", b)
	}
}

func TestNoAbsolutePathsInResults(t *testing.T) {
	env := confinetest.New(t)
	// A link through a missing directory: resolving it fails as "not found".
	confinetest.Symlink(t, env.Root, "ghost.csv", filepath.FromSlash("missing/../data.csv"))
	td := newTD(t, csv.Config{Root: env.Root})
	abs := filepath.ToSlash(env.Root)
	for _, p := range []string{abs + "/data.csv", abs + "/sub/../data.csv", abs + "/missing.csv", abs + "/ghost.csv", abs + "/sub"} {
		for _, c := range pathCalls(p) {
			res, err := td.ExecuteTool(context.Background(), c.Tool, c.Args)
			b, _ := json.Marshal(res)
			if msg := fmt.Sprint(err) + string(b); strings.Contains(msg, env.Base) {
				t.Errorf("%s(%q) shows an absolute host path: %s", c.Tool, p, msg)
			}
		}
	}
	got := drivertest.MustCall(t, td, "read_csv_head", map[string]any{"path": abs + "/data.csv"})
	if got["path"] != "data.csv" || got["returned"] != 2.0 {
		t.Errorf("read_csv_head through an absolute path inside the root: %v", got)
	}
}

func TestSwappedDirectoryBetweenCalls(t *testing.T) {
	env := confinetest.New(t)
	d := drivertest.OpenDriver(t, csv.New, csv.Config{Root: env.Root})
	drivertest.RunSwap(t, env, d, `{"tool":"describe_csv","arguments":{"path":"swap/ok.csv"}}`,
		`{"tool":"describe_csv","arguments":{"path":"swap/secret.csv"}}`)
}

func TestContextCanceled(t *testing.T) {
	dir := t.TempDir()
	writeGenerated(t, dir, "big.csv", 1<<20)
	td := newTD(t, csv.Config{Root: dir})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := td.ExecuteTool(ctx, "summarize_numeric_column", map[string]any{"path": "big.csv", "column": "amount"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{"a.csv": "k,v\nx,1\ny,2\n", "b.csv": "k;v\nz;3\n"})
	d := drivertest.OpenDriver(t, csv.New, csv.Config{Root: dir})
	drivertest.RunConcurrently(t, d, 8, func(i int) []drivertest.ToolCall {
		path := []string{"a.csv", "b.csv"}[i%2]
		return []drivertest.ToolCall{
			{Tool: "list_csv_files"},
			{Tool: "describe_csv", Args: map[string]any{"path": path}},
			{Tool: "read_csv_head", Args: map[string]any{"path": path}},
			{Tool: "filter_csv_rows", Args: map[string]any{"path": path, "column": "k", "value": "x"}},
			{Tool: "summarize_numeric_column", Args: map[string]any{"path": path, "column": "v"}},
		}
	})
}

// TestAttackResultSizeCountsOutput: rows whose cells are empty, or full of
// characters that JSON escapes, cannot make a result larger than the limit: the
// limit counts the bytes of the result, not of the cells.
func TestAttackResultSizeCountsOutput(t *testing.T) {
	dir := confinetest.Tree(t, map[string]string{
		// 1,000,001 empty cells: 1 MB of commas, 3 MB as JSON.
		"empty.csv": "k\n" + strings.Repeat(",", 1_000_000) + "\n",
		// 200 KB of '<' per row: 1.2 MB as JSON ("\u003c"), five rows.
		"angle.csv": "k\n" + strings.Repeat(strings.Repeat("<", 200_000)+"\n", 5),
	})
	td := newTD(t, csv.Config{Root: dir})
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"read_csv_head", map[string]any{"path": "empty.csv", "limit": 0.0}},
		{"read_csv_head", map[string]any{"path": "angle.csv", "limit": 0.0}},
		{"filter_csv_rows", map[string]any{"path": "empty.csv", "column": "k", "value": "", "limit": 0.0}},
		{"filter_csv_rows", map[string]any{"path": "angle.csv", "column": "k", "operator": "contains", "value": "<", "limit": 0.0}},
	} {
		res, err := td.ExecuteTool(context.Background(), tc.tool, tc.args)
		if err != nil {
			t.Fatalf("%s %v: %v", tc.tool, tc.args["path"], err)
		}
		out, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 1<<20+4096 {
			t.Errorf("%s %v: the result is %d bytes, over the 1 MiB limit", tc.tool, tc.args["path"], len(out))
		}
		m := res.(map[string]any)
		if m["truncated"] != true || !strings.Contains(fmt.Sprint(m["notice"]), "larger than 1 MiB") {
			t.Errorf("%s %v: truncated %v, notice %q", tc.tool, tc.args["path"], m["truncated"], m["notice"])
		}
	}
}

package tooltable_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/tooltable"
)

// readTool declares one parameter of each kind Parse knows.
var readTool = mcs.Tool{
	Name:  "read",
	Title: "Read",
	Parameters: []mcs.Parameter{
		{Name: "path", Required: true, Schema: map[string]any{"type": "string"}},
		{Name: "offset", Schema: map[string]any{"type": "integer", "minimum": 0}},
		{Name: "count", Schema: map[string]any{"type": "integer"}},
		{Name: "follow", Schema: map[string]any{"type": "boolean"}},
		{Name: "value", Schema: map[string]any{"type": []string{"string", "number", "boolean"}}},
		{Name: "note"}, // no schema: a string
	},
}

const readParams = "the parameters of read are: path (string, required), offset (integer), count (integer), follow (boolean), value (string or number or boolean), note (string)"

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		tool    *mcs.Tool
		args    map[string]any
		want    map[string]any
		wantErr string
	}{
		{name: "required only", args: map[string]any{"path": "a.txt"}, want: map[string]any{"path": "a.txt"}},
		{name: "nil args", tool: &mcs.Tool{Name: "list"}, args: nil, want: map[string]any{}},
		{
			name: "every type",
			args: map[string]any{"path": "a", "offset": 3.0, "count": -2.0, "follow": true, "value": "x", "note": "n"},
			want: map[string]any{"path": "a", "offset": int64(3), "count": int64(-2), "follow": true, "value": "x", "note": "n"},
		},
		{name: "integer types", args: map[string]any{"path": "a", "offset": 7, "count": int64(8)}, want: map[string]any{"path": "a", "offset": int64(7), "count": int64(8)}},
		{name: "json number", args: map[string]any{"path": "a", "offset": json.Number("12")}, want: map[string]any{"path": "a", "offset": int64(12)}},
		{name: "string holding an integer", args: map[string]any{"path": "a", "offset": "42"}, want: map[string]any{"path": "a", "offset": int64(42)}},
		{name: "string holding an integer with spaces", args: map[string]any{"path": "a", "count": " -5 "}, want: map[string]any{"path": "a", "count": int64(-5)}},
		{name: "string holding a boolean", args: map[string]any{"path": "a", "follow": " false"}, want: map[string]any{"path": "a", "follow": false}},
		{name: "number where a string or number goes", args: map[string]any{"path": "a", "value": 2.5}, want: map[string]any{"path": "a", "value": "2.5"}},
		{name: "boolean where a string or boolean goes", args: map[string]any{"path": "a", "value": false}, want: map[string]any{"path": "a", "value": "false"}},
		{name: "null optional is absent", args: map[string]any{"path": "a", "offset": nil, "note": nil}, want: map[string]any{"path": "a"}},
		{name: "empty string kept", args: map[string]any{"path": ""}, want: map[string]any{"path": ""}},

		{name: "null required is missing", args: map[string]any{"path": nil}, wantErr: `missing required argument "path"; ` + readParams},
		{name: "missing required", args: map[string]any{"offset": 1.0}, wantErr: `missing required argument "path"; ` + readParams},
		{name: "unknown name", args: map[string]any{"path": "a", "file": "b"}, wantErr: `unknown argument "file"; ` + readParams},
		{name: "unknown names sorted", args: map[string]any{"path": "a", "zeta": 1, "alpha": 2}, wantErr: `unknown argument "alpha", "zeta"; `},
		{name: "unknown before missing", args: map[string]any{"file": "b"}, wantErr: `unknown argument "file"`},
		{name: "no arguments taken", tool: &mcs.Tool{Name: "list"}, args: map[string]any{"path": "."}, wantErr: `unknown argument "path"; list takes no arguments`},
		{name: "number for a string", args: map[string]any{"path": 12.0}, wantErr: `argument "path" must be a string, got the number 12`},
		{name: "boolean for a string", args: map[string]any{"path": true}, wantErr: `argument "path" must be a string, got the boolean true`},
		{name: "object for a string", args: map[string]any{"path": map[string]any{}}, wantErr: `argument "path" must be a string, got an object`},
		{name: "array for a string", args: map[string]any{"path": []any{"a"}}, wantErr: `argument "path" must be a string, got an array`},
		{name: "long string shortened", args: map[string]any{"path": "a", "offset": strings.Repeat("x", 50)}, wantErr: `argument "offset" must be an integer, got the string "` + strings.Repeat("x", 40) + `"...`},
		{name: "text for an integer", args: map[string]any{"path": "a", "offset": "ten"}, wantErr: `argument "offset" must be an integer, got the string "ten"`},
		{name: "fraction for an integer", args: map[string]any{"path": "a", "count": 1.5}, wantErr: `argument "count" must be an integer, got the number 1.5`},
		{name: "string holding a fraction", args: map[string]any{"path": "a", "count": "1.5"}, wantErr: `argument "count" must be an integer, got the string "1.5"`},
		{name: "integer too large for a float", args: map[string]any{"path": "a", "count": 1e300}, wantErr: `argument "count" must be an integer`},
		{name: "below the minimum", args: map[string]any{"path": "a", "offset": -1.0}, wantErr: `argument "offset" must be at least 0, got -1`},
		{name: "string below the minimum", args: map[string]any{"path": "a", "offset": "-3"}, wantErr: `argument "offset" must be at least 0, got -3`},
		{name: "number for a boolean", args: map[string]any{"path": "a", "follow": 1.0}, wantErr: `argument "follow" must be true or false, got the number 1`},
		{name: "text for a boolean", args: map[string]any{"path": "a", "follow": "maybe"}, wantErr: `argument "follow" must be true or false, got the string "maybe"`},
		{name: "object for a union", args: map[string]any{"path": "a", "value": map[string]any{}}, wantErr: `argument "value" must be a string or a number or a boolean, got an object`},
		{name: "unexpected Go type", args: map[string]any{"path": "a", "note": struct{}{}}, wantErr: `argument "note" must be a string, got a value of type struct {}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tool := tc.tool
			if tool == nil {
				tool = &readTool
			}
			got, err := tooltable.Parse(tool, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("Parse error = %v, want it to contain %q", err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("Parse returned %v with an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLeavesArgsAlone(t *testing.T) {
	args := map[string]any{"path": "a", "offset": "4", "note": nil}
	if _, err := tooltable.Parse(&readTool, args); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"path": "a", "offset": "4", "note": nil}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("Parse changed its input (-want +got):\n%s", diff)
	}
}

func TestArgumentAccessors(t *testing.T) {
	args := map[string]any{"s": "text", "n": int64(7), "f": 7.0}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"String present", tooltable.String(args, "s", "def"), "text"},
		{"String absent", tooltable.String(args, "x", "def"), "def"},
		{"String of another type", tooltable.String(args, "n", "def"), "def"},
		{"Int present", tooltable.Int(args, "n", -1), int64(7)},
		{"Int absent", tooltable.Int(args, "x", -1), int64(-1)},
		{"Int of an unparsed float", tooltable.Int(args, "f", -1), int64(-1)},
		{"Int of nil args", tooltable.Int(nil, "n", 3), int64(3)},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestQuoteList(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, `"a"`},
		{[]string{"b", "a"}, `"b", "a"`},
		{[]string{"", `say "hi"`, "tab\there", "é"}, `"", "say \"hi\"", "tab\there", "é"`},
	}
	for _, tc := range tests {
		if got := tooltable.QuoteList(tc.names); got != tc.want {
			t.Errorf("QuoteList(%q) = %s, want %s", tc.names, got, tc.want)
		}
	}
}

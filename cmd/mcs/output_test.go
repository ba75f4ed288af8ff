package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

func TestSafeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttext\nline", "plain\ttext\nline"},
		{"\x1b[2Jcleared", `\u001b[2Jcleared`},
		{"bell\a and CR\r", `bell\u0007 and CR\u000d`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"del\x7f", `del\u007f`},
		{"bad \xff utf-8", "bad \uFFFD utf-8"},
	}
	for _, tc := range tests {
		if got := safeText(tc.in); got != tc.want {
			t.Errorf("safeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatResult(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{`{"a":1}`, "{\n  \"a\": 1\n}"},
		{"[1,2]\n", "[\n  1,\n  2\n]"},
		{"not json {", "not json {"},
		{"\x1b]0;title\a", `\u001b]0;title\u0007`},
		{map[string]any{"k": "v\u009b"}, "{\n  \"k\": \"v\\u009b\"\n}"},
		{42, "42"},
	}
	for _, tc := range tests {
		if got := formatResult(tc.in); got != tc.want {
			t.Errorf("formatResult(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDescribeHostile(t *testing.T) {
	var b strings.Builder
	tool := mcs.Tool{Name: "x", Description: "evil \x1b[31mred", Parameters: []mcs.Parameter{{Name: "p\x1b", Schema: map[string]any{"type": "string", "description": "\x1b[2J"}}}}
	if err := describe(&b, tool); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsRune(b.String(), 0x1b) {
		t.Errorf("describe printed an escape character:\n%q", b.String())
	}
}

func TestCoerce(t *testing.T) {
	p := func(schema map[string]any) mcs.Parameter { return mcs.Parameter{Name: "p", Schema: schema} }
	tests := []struct {
		schema  map[string]any
		in      string
		want    any
		wantErr string
	}{
		{map[string]any{"type": "integer"}, " 5 ", int64(5), ""},
		{map[string]any{"type": "integer"}, "5.5", nil, "wants an integer"},
		{map[string]any{"type": "number"}, "2.5", 2.5, ""},
		{map[string]any{"type": "boolean"}, "true", true, ""},
		{map[string]any{"type": "boolean"}, "yes", nil, "wants true or false"},
		{map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, "1, 2", []any{int64(1), int64(2)}, ""},
		{map[string]any{"type": "array"}, `["a", 1]`, []any{"a", float64(1)}, ""},
		{map[string]any{"type": "object"}, `{"a": 1}`, map[string]any{"a": float64(1)}, ""},
		{map[string]any{"type": "object"}, `nope`, nil, "wants a JSON object"},
		{map[string]any{"type": []any{"null", "integer"}}, "7", int64(7), ""},
		{nil, "text", "text", ""},
		// Several types: Stripe's metadata is an object or the empty string.
		{stripeMetadata, `{"a": "b"}`, map[string]any{"a": "b"}, ""},
		{stripeMetadata, ``, "", ""},
		{map[string]any{"oneOf": []any{map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, map[string]any{"type": "integer"}}}, "1,2", []any{int64(1), int64(2)}, ""},
		{map[string]any{"oneOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "boolean"}}}, "x", nil, "wants a value of type integer or boolean"},
		{map[string]any{"oneOf": []any{map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, map[string]any{"type": "integer"}}}, "[1,2]", []any{float64(1), float64(2)}, ""},
		{map[string]any{"type": []any{"string", "integer"}}, "5", "5", ""},
		{map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "boolean"}}}, "true", true, ""},
	}
	for _, tc := range tests {
		got, err := coerce(p(tc.schema), tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("coerce(%v, %q): error %v, want %q", tc.schema, tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("coerce(%v, %q): %v", tc.schema, tc.in, err)
			continue
		}
		if diff := cmpDiff(tc.want, got); diff != "" {
			t.Errorf("coerce(%v, %q) (-want +got):\n%s", tc.schema, tc.in, diff)
		}
	}
}

// stripeMetadata is the schema of a Stripe metadata parameter: an object of
// strings, or "" to clear it.
var stripeMetadata = map[string]any{"anyOf": []any{
	map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
	map[string]any{"type": "string", "enum": []any{""}},
}}

// TestTypeHint: describe names every type of a parameter of several types.
func TestTypeHint(t *testing.T) {
	for _, tc := range []struct {
		schema map[string]any
		want   string
	}{
		{stripeMetadata, "object|string"},
		{map[string]any{"type": []any{"string", "integer", "null"}}, "string|integer"},
		{map[string]any{"oneOf": []any{map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, map[string]any{"type": "string"}}}, "array of string|string"},
		{map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, "array of integer"},
		{map[string]any{"description": "anything"}, "string"},
	} {
		if got := typeHint(tc.schema); got != tc.want {
			t.Errorf("typeHint(%v) = %q, want %q", tc.schema, got, tc.want)
		}
	}
}

func cmpDiff(want, got any) string { return cmp.Diff(want, got) }

package mcs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

// asMap is the map a native tool was before it had a type.
func asMap(f mcs.FunctionTool) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{
		"name": f.Name, "description": f.Description, "parameters": f.Parameters}}
}

// encode encodes v with an Encoder, HTML escaping on or off, indented or not.
func encode(t *testing.T, v any, escapeHTML bool, indent string) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A FunctionTool encodes to the bytes its map encoded to, with json.Marshal and
// with an Encoder in every setting the module uses.
func TestFunctionToolJSONIsTheMapJSON(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"q": map[string]any{"type": "string", "description": "a <b> & c"}, "n": map[string]any{"type": "integer", "maximum": 1e21}},
		"required": []string{"q"}}
	tests := []struct {
		name string
		tool mcs.FunctionTool
	}{
		{"plain", mcs.FunctionTool{Name: "get_pet", Description: "Get a pet.", Parameters: schema}},
		{"html and separators", mcs.FunctionTool{Name: "a<b>&c", Description: "x < y && y > z \u2028 \u2029 \"quoted\" \\ \t\n\x01 é 🐈", Parameters: schema}},
		{"empty description", mcs.FunctionTool{Name: "ping", Parameters: map[string]any{}}},
		{"nil parameters", mcs.FunctionTool{Name: "ping", Description: "Ping."}},
		{"zero", mcs.FunctionTool{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.tool)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(asMap(tc.tool))
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("json.Marshal (-map +FunctionTool):\n%s", diff)
			}
			for _, escape := range []bool{true, false} {
				for _, indent := range []string{"", "  "} {
					want := encode(t, []any{asMap(tc.tool)}, escape, indent)
					got := encode(t, []mcs.FunctionTool{tc.tool}, escape, indent)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("Encoder escapeHTML=%v indent=%q (-map +FunctionTool):\n%s", escape, indent, diff)
					}
				}
			}
		})
	}
}

func TestFunctionToolUnmarshal(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    mcs.FunctionTool
		wantErr string // substring; "" for none
	}{
		{"full", `{"type":"function","function":{"name":"get_pet","description":"Get a pet.","parameters":{"type":"object","required":["id"]}}}`,
			mcs.FunctionTool{Name: "get_pet", Description: "Get a pet.", Parameters: map[string]any{"type": "object", "required": []any{"id"}}}, ""},
		{"keys in any order, extra keys ignored", `{"function":{"parameters":null,"strict":true,"name":"ping"},"type":"function","x":1}`,
			mcs.FunctionTool{Name: "ping"}, ""},
		{"null is no change", `null`, mcs.FunctionTool{Name: "old"}, ""},
		{"another type", `{"type":"custom","function":{"name":"ping"}}`, mcs.FunctionTool{Name: "old"}, `type is "custom"`},
		{"no type", `{"function":{"name":"ping"}}`, mcs.FunctionTool{Name: "old"}, `type is ""`},
		{"no function object", `{"type":"function","name":"ping"}`, mcs.FunctionTool{Name: "old"}, `no "function" object`},
		{"not an object", `[1]`, mcs.FunctionTool{Name: "old"}, "function tool"},
		{"parameters not an object", `{"type":"function","function":{"name":"ping","parameters":[]}}`, mcs.FunctionTool{Name: "old"}, "function tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mcs.FunctionTool{Name: "old"}
			err := json.Unmarshal([]byte(tc.in), &got)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one with %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// What MarshalJSON writes, UnmarshalJSON reads back.
func TestFunctionToolRoundTrip(t *testing.T) {
	in := mcs.NewFunctionTool(mcs.Tool{Name: "find", Title: "Find <things>", Parameters: []mcs.Parameter{
		{Name: "q", Required: true}, {Name: "limit", Schema: map[string]any{"type": "integer"}}}})
	data, err := json.Marshal([]mcs.FunctionTool{in})
	if err != nil {
		t.Fatal(err)
	}
	var out []mcs.FunctionTool
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	// Decoded JSON holds []any where the schema held []string.
	var want []mcs.FunctionTool
	want = append(want, in)
	want[0].Parameters = map[string]any{"type": "object", "required": []any{"q"}, "properties": map[string]any{
		"q": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestNewFunctionTool(t *testing.T) {
	tests := []struct {
		name string
		tool mcs.Tool
		want mcs.FunctionTool
	}{
		{"description", mcs.Tool{Name: "a", Title: "A", Description: "Does a."},
			mcs.FunctionTool{Name: "a", Description: "Does a.", Parameters: map[string]any{"type": "object", "properties": map[string]any{}}}},
		{"title when no description", mcs.Tool{Name: "b", Title: "B", Parameters: []mcs.Parameter{{Name: "x", Description: "The x.", Required: true}}},
			mcs.FunctionTool{Name: "b", Description: "B", Parameters: map[string]any{"type": "object", "required": []string{"x"},
				"properties": map[string]any{"x": map[string]any{"type": "string", "description": "The x."}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mcs.NewFunctionTool(tc.tool)); diff != "" {
				t.Errorf("NewFunctionTool (-want +got):\n%s", diff)
			}
		})
	}
}

// ExampleNewFunctionTool shows a tool as native tool calling sends it.
func ExampleNewFunctionTool() {
	ft := mcs.NewFunctionTool(mcs.Tool{Name: "get_weather", Description: "Current weather of a city.",
		Parameters: []mcs.Parameter{{Name: "city", Required: true}}})
	data, err := json.Marshal(ft)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(data))
	// Output:
	// {"function":{"description":"Current weather of a city.","name":"get_weather","parameters":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}},"type":"function"}
}

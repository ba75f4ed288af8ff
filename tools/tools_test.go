package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
)

type Color string

type Address struct {
	City string `json:"city" description:"City name."`
	Zip  string `json:"zip,omitempty"`
}

type Node struct {
	Name     string  `json:"name"`
	Children []*Node `json:"children,omitempty"`
}

type Base struct {
	Tenant string `json:"tenant"`
}

type Everything struct {
	Base
	Text    string            `json:"text" description:"Some text."`
	Count   int               `json:"count"`
	ID      int64             `json:"id"`
	Small   uint8             `json:"small,omitempty"`
	Ratio   float64           `json:"ratio,omitempty"`
	On      bool              `json:"on,omitempty"`
	Tags    []string          `json:"tags,omitempty"`
	Pair    [2]int            `json:"pair,omitzero"`
	Labels  map[string]string `json:"labels,omitempty"`
	Addr    Address           `json:"addr,omitzero"`
	When    time.Time         `json:"when,omitzero"`
	Maybe   *string           `json:"maybe"`
	Color   Color             `json:"color,omitempty" enum:"red,green" default:"red"`
	Level   int               `json:"level,omitempty" enum:"1,2,3"`
	Blob    []byte            `json:"blob,omitempty"`
	Any     any               `json:"any,omitempty"`
	Tree    *Node             `json:"tree,omitempty"`
	Ignored string            `json:"-"`
	NoTag   string            `json:",omitempty"`
	//lint:ignore U1000 an unexported field, which the schema must leave out
	private  string
	Duration json.Number `json:"num,omitempty"`
}

func TestSchemaInference(t *testing.T) {
	tb := tools.New(mcs.Meta{ID: "t", Name: "T", Version: "1"})
	tools.Add(tb, "all", "Every type.", func(context.Context, Everything) (string, error) { return "", nil })
	list, err := tb.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]mcs.Parameter{}
	var order []string
	for _, p := range list[0].Parameters {
		got[p.Name] = p
		order = append(order, p.Name)
	}
	wantOrder := []string{"tenant", "text", "count", "id", "small", "ratio", "on", "tags", "pair", "labels", "addr", "when", "maybe", "color", "level", "blob", "any", "tree", "NoTag", "num"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Fatalf("parameter order (-want +got):\n%s", diff)
	}
	tests := []struct {
		name     string
		required bool
		desc     string
		schema   map[string]any
	}{
		{"tenant", true, "", map[string]any{"type": "string"}},
		{"text", true, "Some text.", map[string]any{"type": "string"}},
		{"count", true, "", map[string]any{"type": "integer"}},
		{"small", false, "", map[string]any{"type": "integer", "minimum": 0}},
		{"ratio", false, "", map[string]any{"type": "number"}},
		{"on", false, "", map[string]any{"type": "boolean"}},
		{"tags", false, "", map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
		{"pair", false, "", map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2, "maxItems": 2}},
		{"labels", false, "", map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}},
		{"addr", false, "", map[string]any{"type": "object", "additionalProperties": false, "required": []any{"city"},
			"properties": map[string]any{"city": map[string]any{"type": "string", "description": "City name."}, "zip": map[string]any{"type": "string"}}}},
		{"when", false, "", map[string]any{"type": "string", "format": "date-time"}},
		{"maybe", false, "", map[string]any{"type": "string"}},
		{"color", false, "", map[string]any{"type": "string", "enum": []any{"red", "green"}, "default": "red"}},
		{"level", false, "", map[string]any{"type": "integer", "enum": []any{json.Number("1"), json.Number("2"), json.Number("3")}}},
		{"blob", false, "", map[string]any{"type": "string", "contentEncoding": "base64"}},
		{"any", false, "", map[string]any{}},
		{"NoTag", false, "", map[string]any{"type": "string"}},
		{"num", false, "", map[string]any{"type": "number"}},
	}
	for _, tc := range tests {
		p := got[tc.name]
		if p.Required != tc.required || p.Description != tc.desc {
			t.Errorf("%s: required=%v desc=%q, want %v %q", tc.name, p.Required, p.Description, tc.required, tc.desc)
		}
		if diff := cmp.Diff(tc.schema, p.Schema); diff != "" {
			t.Errorf("%s schema (-want +got):\n%s", tc.name, diff)
		}
	}
	// The recursive type ends: its inner occurrence is an object.
	tree := got["tree"].Schema
	inner := tree["properties"].(map[string]any)["children"].(map[string]any)["items"].(map[string]any)
	if inner["type"] != "object" || inner["properties"] != nil {
		t.Errorf("recursive occurrence = %v, want a plain object", inner)
	}
	if err := list[0].Validate(); err != nil {
		t.Errorf("inferred tool does not validate: %v", err)
	}
}

func TestRegistrationPanics(t *testing.T) {
	tests := []struct {
		name string
		add  func(tb *tools.Table)
		want string
	}{
		{"duplicate", func(tb *tools.Table) {
			tools.Add(tb, "x", "X.", func(context.Context, struct{}) (int, error) { return 0, nil })
			tools.Add(tb, "x", "X again.", func(context.Context, struct{}) (int, error) { return 0, nil })
		}, `tool "x" is registered twice`},
		{"channel field", func(tb *tools.Table) {
			tools.Add(tb, "ch", "C.", func(context.Context, struct{ C chan int }) (int, error) { return 0, nil })
		}, `tool "ch": field C: type chan int has no JSON Schema`},
		{"nested func field", func(tb *tools.Table) {
			type inner struct{ F func() }
			tools.Add(tb, "fn", "F.", func(context.Context, struct{ In inner }) (int, error) { return 0, nil })
		}, `tool "fn": field In.F: type func() has no JSON Schema`},
		{"not a struct", func(tb *tools.Table) {
			tools.Add(tb, "s", "S.", func(context.Context, string) (int, error) { return 0, nil })
		}, `tool "s": the input type string is not a struct`},
		{"no description", func(tb *tools.Table) {
			tools.Add(tb, "d", "", func(context.Context, struct{}) (int, error) { return 0, nil })
		}, `neither title nor description`},
		{"bad enum", func(tb *tools.Table) {
			tools.Add(tb, "e", "E.", func(context.Context, struct {
				N int `enum:"1,two"`
			}) (int, error) {
				return 0, nil
			})
		}, `field N: the enum value "two" is not a int`},
		{"duplicate json name", func(tb *tools.Table) {
			tools.Add(tb, "j", "J.", func(context.Context, struct {
				A string
				B string `json:"A"`
			}) (int, error) {
				return 0, nil
			})
		}, `two fields have the JSON name "A"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				v := recover()
				if v == nil || !strings.Contains(fmt.Sprint(v), tc.want) {
					t.Fatalf("panic = %v, want one containing %q", v, tc.want)
				}
			}()
			tc.add(tools.New(mcs.Meta{ID: "t"}))
		})
	}
}

type CreateIssue struct {
	Title  string   `json:"title"`
	Repo   int64    `json:"repo"`
	Labels []string `json:"labels,omitempty"`
	Addr   *Address `json:"addr,omitempty"`
	Due    time.Time
}

func TestDecoding(t *testing.T) {
	tb := tools.New(mcs.Meta{ID: "t"})
	var got CreateIssue
	tools.Add(tb, "create", "Creates an issue.", func(_ context.Context, in CreateIssue) (string, error) {
		got = in
		return "created " + in.Title, nil
	})
	ctx := context.Background()
	due := "2026-12-01T10:00:00Z"
	res, err := tb.ExecuteTool(ctx, "create", map[string]any{
		"title": "bug", "repo": json.Number("9007199254740993"), "labels": []any{"a", "b"},
		"addr": map[string]any{"city": "Berlin"}, "Due": due,
	})
	if err != nil || res != "created bug" {
		t.Fatalf("ExecuteTool = %v, %v", res, err)
	}
	want := CreateIssue{Title: "bug", Repo: 9007199254740993, Labels: []string{"a", "b"}, Addr: &Address{City: "Berlin"},
		Due: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decoded (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"every problem at once", map[string]any{"title": 5, "repo": 1.5, "extra": true, "Due": due}, []string{
			"/extra: unknown argument; the parameters are \"title\", \"repo\", \"labels\", \"addr\", \"Due\"",
			`/title: want string, got number 5`,
			`/repo: want integer, got number 1.5 (not a whole number)`,
		}},
		{"missing required", map[string]any{"title": "x"}, []string{
			"/repo: missing required argument (want integer)",
			"/Due: missing required argument (want string (RFC 3339 date-time))",
		}},
		{"null is absent", map[string]any{"title": nil, "repo": 1, "Due": due}, []string{
			"/title: missing required argument (want string)",
		}},
		{"nested type", map[string]any{"title": "x", "repo": 1, "Due": due, "addr": map[string]any{"city": 7}}, []string{
			"/addr/city: want string, got number",
		}},
		{"nested unknown", map[string]any{"title": "x", "repo": 1, "Due": due, "addr": map[string]any{"town": "B"}}, []string{
			`/addr: unknown field "town"`,
		}},
		{"array element", map[string]any{"title": "x", "repo": 1, "Due": due, "labels": []any{"a", 2}}, []string{
			"/labels: want string, got number",
		}},
		{"bad time", map[string]any{"title": "x", "repo": 1, "Due": "yesterday"}, nil},
		{"string for integer", map[string]any{"title": "x", "repo": "five", "Due": due}, []string{
			`/repo: want integer, got string "five"`,
		}},
		{"quoted fraction for integer", map[string]any{"title": "x", "repo": "1.5", "Due": due}, []string{
			`/repo: want integer, got string "1.5" (not a whole number that fits)`,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got = CreateIssue{}
			_, err := tb.ExecuteTool(ctx, "create", tc.args)
			var ae *mcs.ArgumentsError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *mcs.ArgumentsError", err)
			}
			if got.Title != "" {
				t.Error("the function ran despite bad arguments")
			}
			if ae.Tool != "create" {
				t.Errorf("Tool = %q", ae.Tool)
			}
			if tc.want == nil {
				if len(ae.Problems) != 1 || !strings.HasPrefix(ae.Problems[0], "/Due: ") {
					t.Errorf("problems = %q, want one about /Due", ae.Problems)
				}
				return
			}
			if diff := cmp.Diff(tc.want, ae.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecuteErrors(t *testing.T) {
	tb := tools.New(mcs.Meta{ID: "t"})
	boom := errors.New("boom")
	tools.Add(tb, "fail", "Fails.", func(context.Context, struct{}) (any, error) { return nil, boom })
	tools.Add(tb, "panic", "Panics.", func(context.Context, struct{}) (any, error) { panic("oops") })
	ctx := context.Background()
	if _, err := tb.ExecuteTool(ctx, "nope", nil); !errors.Is(err, mcs.ErrUnknownTool) || !strings.Contains(err.Error(), "fail, panic") {
		t.Errorf("unknown tool err = %v", err)
	}
	if _, err := tb.ExecuteTool(ctx, "fail", nil); err != boom {
		t.Errorf("fail err = %v", err)
	}
	var pe *mcs.PanicError
	if _, err := tb.ExecuteTool(ctx, "panic", nil); !errors.As(err, &pe) || pe.Value != "oops" {
		t.Errorf("panic err = %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tb.ExecuteTool(cctx, "fail", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled err = %v", err)
	}
}

func TestOptionsAndMeta(t *testing.T) {
	tb := tools.New(mcs.Meta{ID: "t", Name: "T"})
	tools.Add(tb, "read", "Reads.", func(context.Context, struct{}) (int, error) { return 1, nil },
		tools.WithTitle("Read"), tools.WithAnnotations(mcs.ToolAnnotations{ReadOnly: true}))
	list, _ := tb.ListTools(context.Background())
	if list[0].Title != "Read" || list[0].Annotations == nil || !list[0].Annotations.ReadOnly {
		t.Errorf("tool = %+v", list[0])
	}
	// The listing is the caller's: changing it does not change the table.
	list[0].Annotations.ReadOnly = false
	list[0].Name = "changed"
	again, _ := tb.ListTools(context.Background())
	if again[0].Name != "read" || !again[0].Annotations.ReadOnly {
		t.Error("ListTools shares its result with the table")
	}
	if !tb.Meta().HasCapability(mcs.CapabilityOrchestratable) || tb.Meta().HasCapability(mcs.CapabilityStandalone) {
		t.Errorf("capabilities = %v", tb.Meta().Capabilities)
	}
	def, ok, err := tb.ToolDefinition(context.Background(), "read")
	if !ok || err != nil || def.Title != "Read" {
		t.Errorf("ToolDefinition = %+v %v %v", def, ok, err)
	}
}

func TestConcurrentAddAndCall(t *testing.T) {
	tb := tools.New(mcs.Meta{ID: "t"})
	tools.Add(tb, "echo", "Echoes.", func(_ context.Context, in struct {
		S string `json:"s"`
	}) (string, error) {
		return in.S, nil
	})
	v0 := tb.ToolsVersion()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 100 {
				if r, err := tb.ExecuteTool(context.Background(), "echo", map[string]any{"s": "x"}); err != nil || r != "x" {
					t.Errorf("echo = %v %v", r, err)
					return
				}
				_, _ = tb.ListTools(context.Background())
			}
		}()
		go func() {
			defer wg.Done()
			tools.Add(tb, fmt.Sprintf("t%d", i), "T.", func(context.Context, struct{}) (int, error) { return i, nil })
		}()
	}
	wg.Wait()
	if got := tb.ToolsVersion() - v0; got != 8 {
		t.Errorf("version grew by %d, want 8", got)
	}
	list, _ := tb.ListTools(context.Background())
	if len(list) != 9 {
		t.Errorf("%d tools, want 9", len(list))
	}
}

func TestThroughBaseDriver(t *testing.T) {
	tb := tools.New(mcs.Meta{ID: "notes", Name: "Notes", Version: "1"})
	tools.Add(tb, "add", "Adds two integers.", func(_ context.Context, in struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (int, error) {
		return in.A + in.B, nil
	})
	d := mcs.NewBaseDriver(tb)
	resp := d.ProcessLLMResponse(context.Background(), `{"tool":"add","arguments":{"a":2,"b":true}}`)
	if !resp.CallFailed || !strings.Contains(resp.RetryPrompt, `/b: want integer, got boolean true`) {
		t.Fatalf("bad call: %+v", resp)
	}
	resp = d.ProcessLLMResponse(context.Background(), `{"tool":"add","arguments":{"a":2,"b":"3"}}`)
	if !resp.CallExecuted || resp.Calls[0].Result != 5 {
		t.Fatalf("good call: %+v", resp)
	}
}

// loose is a string that also accepts numbers, with its own schema.
type loose string

func (loose) JSONSchema() map[string]any { return map[string]any{"type": []any{"string", "number"}} }

func (l *loose) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = loose(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("want a string or a number")
	}
	*l = loose(n)
	return nil
}

func TestSchemerAndParameterDescription(t *testing.T) {
	tb := tools.New(mcs.Meta{ID: "t"})
	var got loose
	tools.Add(tb, "find", "Finds.", func(_ context.Context, in struct {
		Value loose   `json:"value" description:"static"`
		Limit *uint64 `json:"limit,omitempty"`
	}) (string, error) {
		got = in.Value
		return "", nil
	}, tools.WithParameterDescription("limit", "At most 7 rows."))
	list, _ := tb.ListTools(context.Background())
	want := []mcs.Parameter{
		{Name: "value", Description: "static", Required: true, Schema: map[string]any{"type": []any{"string", "number"}}},
		{Name: "limit", Description: "At most 7 rows.", Schema: map[string]any{"type": "integer", "minimum": 0}},
	}
	if diff := cmp.Diff(want, list[0].Parameters); diff != "" {
		t.Fatalf("parameters (-want +got):\n%s", diff)
	}
	if _, err := tb.ExecuteTool(context.Background(), "find", map[string]any{"value": 42.0, "limit": "3"}); err != nil || got != "42" {
		t.Fatalf("value = %q, err = %v", got, err)
	}
	_, err := tb.ExecuteTool(context.Background(), "find", map[string]any{"value": []any{}})
	if err == nil || !strings.Contains(err.Error(), "/value: want a string or a number (got array)") {
		t.Fatalf("err = %v", err)
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), `names "nope", which is not a parameter`) {
			t.Fatalf("panic = %v", v)
		}
	}()
	tools.Add(tb, "other", "O.", func(context.Context, struct{}) (int, error) { return 0, nil }, tools.WithParameterDescription("nope", "x"))
}

package mcs_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

// An integer float64 cannot hold exactly reaches the tool as written, a
// json.Number, in every way a model writes arguments; other numbers stay float64.
func TestBigIntegersKeepTheirDigits(t *testing.T) {
	const id = "1234567890123456789" // float64 would make it ...768
	want := map[string]any{"id": json.Number(id), "small": 42.0, "big_exact": 1e20, "neg": json.Number("-9007199254740993")}
	args := `{"id": ` + id + `, "small": 42, "big_exact": 100000000000000000000, "neg": -9007199254740993}`
	replies := map[string]any{
		"text, strict":                      `Looking it up. {"tool": "get_weather", "arguments": ` + args + `}`,
		"text, repaired":                    `{"tool": "get_weather", "arguments": ` + args[:len(args)-1] + `,},}`,
		"text, arguments as a string":       `{"tool": "get_weather", "arguments": ` + mustQuote(t, args) + `}`,
		"Chat Completions message":          map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": args}}}},
		"Chat Completions message as bytes": []byte(`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":` + mustQuote(t, args) + `}}]}`),
		"Ollama message as bytes":           []byte(`{"message":{"role":"assistant","tool_calls":[{"function":{"name":"get_weather","arguments":` + args + `}}]}}`),
	}
	for name, reply := range replies {
		t.Run(name, func(t *testing.T) {
			var got map[string]any
			td := &recordingDriver{onCall: func(args map[string]any) { got = args }}
			r := mcs.NewBaseDriver(td).ProcessLLMResponse(context.Background(), reply)
			if !r.CallExecuted {
				t.Fatalf("no call ran: %+v", r)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("arguments the tool got (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, r.Calls[0].Arguments); diff != "" {
				t.Errorf("arguments of the record (-want +got):\n%s", diff)
			}
		})
	}
}

func mustQuote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recordingDriver lists get_weather and hands its arguments to onCall.
type recordingDriver struct{ onCall func(map[string]any) }

func (*recordingDriver) Meta() mcs.Meta { return mcs.Meta{ID: "test/recording", Name: "Recording"} }
func (*recordingDriver) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "get_weather", Description: "Weather."}}, nil
}
func (d *recordingDriver) ExecuteTool(_ context.Context, _ string, args map[string]any) (any, error) {
	d.onCall(args)
	return "ok", nil
}

// FuzzUnmarshalJSON: the kernel's decoding accepts and refuses what encoding/json
// does, and gives the same values but for integers float64 cannot hold exactly,
// which stay json.Numbers whose float64 is encoding/json's value.
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"id":1234567890123456789,"l":[9007199254740993,1e400]}`,
		`{"n":-12345678901234567890123}`, `{"x":100000000000000000000} x`, `[1,2]`, `null`, `{"a":1e999999}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want, got map[string]any
		errWant := json.Unmarshal([]byte(s), &want)
		errGot := mcs.UnmarshalJSONForTest([]byte(s), &got)
		if (errWant == nil) != (errGot == nil) {
			t.Fatalf("%q: encoding/json says %v, the kernel %v", s, errWant, errGot)
		}
		if errWant != nil {
			return
		}
		if diff := cmp.Diff(any(want), asFloats(got)); diff != "" {
			t.Fatalf("%q (-encoding/json +kernel):\n%s", s, diff)
		}
	})
}

// asFloats returns v with every json.Number turned into its float64.
func asFloats(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = asFloats(e)
		}
		return out
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = asFloats(e)
		}
		return out
	}
	return v
}

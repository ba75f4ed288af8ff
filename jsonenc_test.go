package mcs

import (
	"encoding/json"
	"math"
	"testing"
)

func checkAppendJSON(t *testing.T, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	got, ok := appendJSON(nil, v, 0)
	if err != nil {
		if ok {
			t.Errorf("appendJSON(%#v) = %s, but json.Marshal refuses it: %v", v, got, err)
		}
		return
	}
	if ok && string(got) != string(want) {
		t.Errorf("appendJSON(%#v)\n got %s\nwant %s", v, got, want)
	}
}

func TestAppendJSONMatchesMarshal(t *testing.T) {
	values := []any{
		nil, true, false, "", "plain", "quote\" back\\slash", "<a href='x'>&amp;</a>", "\x00\x01\b\f\n\r\t\x1f\x7f",
		"\u2028\u2029", "héllo wörld ✓ 😀", "bad \xff utf8 \xc3", 0.0, math.Copysign(0, -1), 1.0, -1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789012345678.0,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 3.14159, 42, -7, json.Number("12345678901234567890"), json.Number(""), json.Number("1.5e3"),
		[]any{}, []any(nil), map[string]any{}, map[string]any(nil),
		map[string]any{"b": 1.0, "a": []any{"x", map[string]any{"z": nil, "y": true}}, "<": ">"},
		math.NaN(), math.Inf(1), json.Number("not a number"), struct{}{},
	}
	for _, v := range values {
		checkAppendJSON(t, v)
		checkAppendJSON(t, map[string]any{"k": v})
		checkAppendJSON(t, []any{v, v})
	}
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"path":"a<b>&c","n":[1,2.5e-9,true,null]}`, `"\u2028\ud800"`, `[{"x":{"y":[]}}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendJSON(t, s)
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			checkAppendJSON(t, v)
		}
	})
}

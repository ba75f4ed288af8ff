package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValue(t *testing.T) {
	r := New(nil, 8)
	type named []byte
	in := map[string]any{
		"path":          "a/very/long/path.txt",
		"Access-Token":  "s3cr3t",
		"nested":        map[string]any{"api key": "k", "list": []any{map[string]string{"password": "p", "user": "u"}}},
		"raw":           json.RawMessage(`{"secret":"x","n":1}`),
		"bytes":         []byte("abc"),
		"named":         named("abcd"),
		"n":             1.5,
		"Authorization": map[string]any{"scheme": "Bearer"},
	}
	want := map[string]any{
		"path":          "a/very/l…(12 more bytes)",
		"Access-Token":  Redacted,
		"nested":        map[string]any{"api key": Redacted, "list": []any{map[string]any{"password": Redacted, "user": "u"}}},
		"raw":           map[string]any{"secret": Redacted, "n": 1.0},
		"bytes":         "[3 bytes]",
		"named":         "[4 bytes]",
		"n":             1.5,
		"Authorization": Redacted,
	}
	if diff := cmp.Diff(want, r.Value(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if in["Access-Token"] != "s3cr3t" {
		t.Error("input modified")
	}
}

func TestKeysAndDepth(t *testing.T) {
	r := New([]string{"PIN", " "}, 0)
	if !r.Sensitive("card-pin") || r.Sensitive("token") {
		t.Error("custom keys")
	}
	long := strings.Repeat("x", 1000)
	if r.Value(long) != long {
		t.Error("cut with maxLen 0")
	}
	var v any = "leaf"
	for range 200 {
		v = []any{v}
	}
	s, _ := json.Marshal(r.Value(v))
	if !strings.Contains(string(s), "[too deep]") {
		t.Error("depth not bounded")
	}
	if got := New(nil, 2).Cut("héllo"); got != "h…(5 more bytes)" {
		t.Errorf("cut = %q", got)
	}
}

func TestSecretsInsideText(t *testing.T) {
	r := New(nil, 0)
	for _, tt := range []struct{ in, want string }{
		{"Authorization: Bearer abc.def.ghi", "Authorization: Bearer [REDACTED]"},
		{"GET /x?token=s3cr3t&page=2", "GET /x?token=[REDACTED]&page=2"},
		{"API_KEY=sk-123 make run", "API_KEY=[REDACTED] make run"},
		{`{"password":"hunter22","user":"bob"}`, `{"password":"[REDACTED]","user":"bob"}`},
		{"curl -H Bearer eyJhbGciOi", "curl -H Bearer [REDACTED]"},
		{"nothing to see", "nothing to see"},
	} {
		if got := r.Text(tt.in, nil); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPairsAndKnown(t *testing.T) {
	r := New(nil, 0)
	args := map[string]any{
		"headers": []any{map[string]any{"name": "X-Api-Key", "value": "k-777"}, map[string]any{"name": "Accept", "value": "json"}},
		"pair":    []any{"token", "t-888"},
		"secret":  "s-999 tail",
	}
	out, known := r.Args(args)
	want := map[string]any{
		"headers": []any{map[string]any{"name": "X-Api-Key", "value": Redacted}, map[string]any{"name": "Accept", "value": "json"}},
		"pair":    []any{"token", Redacted},
		"secret":  Redacted,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	msg := r.Text("upstream said: bad key k-777 for t-888 (s-999 tail)", known)
	if strings.Contains(msg, "k-777") || strings.Contains(msg, "t-888") || strings.Contains(msg, "s-999") {
		t.Errorf("known secrets left in %q", msg)
	}
}

// TestQuotedNameInErrorProse: a quoted name in the prose of an error, followed by
// a colon and ordinary words, is not a secret pair; real pairs in every spelling
// still are.
func TestQuotedNameInErrorProse(t *testing.T) {
	r := New(nil, 0)
	for _, tt := range []struct{ name, in, want string }{
		// Prose: kept as it is.
		{"scheme name then an error chain",
			`credential for security scheme "api_key": auth: no credential (the provider returned an empty token)`,
			`credential for security scheme "api_key": auth: no credential (the provider returned an empty token)`},
		{"parameter name then a sentence", `parameter "token": must be a string`, `parameter "token": must be a string`},
		{"single quotes", `header 'Authorization': missing`, `header 'Authorization': missing`},
		{"word then a full stop", `no value for "password": required.`, `no value for "password": required.`},
		// Pairs: still redacted.
		{"JSON pair", `"api_key": "sk-live-123"`, `"api_key": "[REDACTED]"`},
		{"JSON pair without space", `{"password":"hunter"}`, `{"password":"[REDACTED]"}`},
		{"single-quoted pair", `{'token': 'abc'}`, `{'token': '[REDACTED]'}`},
		{"assignment", `api_key=abc123`, `api_key=[REDACTED]`},
		{"quoted name, assignment of a word", `"password"=hunter`, `"password"=[REDACTED]`},
		{"header", `Authorization: Bearer xyz`, `Authorization: Bearer [REDACTED]`},
		{"quoted header name and scheme", `"Authorization": Bearer xyz`, `"Authorization": Bearer [REDACTED]`},
		{"unquoted name and a word", `X-Api-Key: abcdef`, `X-Api-Key: [REDACTED]`},
		{"quoted name, unquoted key", `"api_key": sk-live-123`, `"api_key": [REDACTED]`},
		{"quoted name, number", `"pin_token": 12345`, `"pin_token": [REDACTED]`},
		{"quoted name, long run of letters", `"secret": ABCDEFGHIJKLMNOPQRSTUVWXYZ`, `"secret": [REDACTED]`},
		{"value with = and :", `token=a=b:c== next`, `token=[REDACTED] next`},
		{"basic credentials", `Authorization: Basic dXNlcjpwYXNz==`, `Authorization: Basic [REDACTED]`},
		{"prose, then a real pair", `scheme "api_key": auth: rejected token=abc123`, `scheme "api_key": auth: rejected token=[REDACTED]`},
		{"a pair as the value of a word", `error: token=abc123`, `error: token=[REDACTED]`},
		{"a pair after an odd chain of words", `pkg: pkg: pkg: password=hunter2`, `pkg: pkg: pkg: password=[REDACTED]`},
		{"a pair after an even chain of words", `pkg: pkg: password=hunter2`, `pkg: pkg: password=[REDACTED]`},
		{"a header as the value of a word", `sent: Authorization: Basic dXNlcjpwYXNz`, `sent: Authorization: Basic [REDACTED]`},
		{"a quoted pair as a value", `config="api_key":"sk-1"`, `config="api_key":"[REDACTED]"`},
		{"an error chain through a sensitive word", `rest: credential: authentication required: sign in`, `rest: credential: authentication required: sign in`},
		{"an error chain, then a pair", `rest: auth: failed: token=abc123`, `rest: auth: failed: token=[REDACTED]`},
		{"a chained header with a key", `sent: X-Api-Key: k-12345`, `sent: X-Api-Key: [REDACTED]`},
		{"long s and Kelvin sign in a name", "ſecret=abc toKen=xyz", "ſecret=[REDACTED] toKen=[REDACTED]"},
	} {
		if got := r.Text(tt.in, nil); got != tt.want {
			t.Errorf("%s: Text(%q)\n got %q\nwant %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// FuzzPrefilter: skipping the regular expressions when no sensitive fragment and
// no scheme word occurs changes nothing.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{"a=b token=c", "rest: credential: authentication required", "x: Bearer abcdefghijk",
		"API-KEY: 1234", "to\u212Aen=secret", "pass word=1", "ſecret=x", "Authorization: Basic dXNlcjpwYXNz"} {
		f.Add(s)
	}
	r := New(nil, 0)
	f.Fuzz(func(t *testing.T, s string) {
		fast := r.Text(s, nil)
		noPrefilter = true
		slow := r.Text(s, nil)
		noPrefilter = false
		if fast != slow {
			t.Fatalf("Text(%q): with the prefilter %q, without %q", s, fast, slow)
		}
	})
}

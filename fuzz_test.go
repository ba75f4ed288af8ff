package mcs_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
)

// FuzzProcessLLMResponse feeds random replies, as text and as JSON bytes: processing
// never panics and never executes a tool the driver does not list.
func FuzzProcessLLMResponse(f *testing.F) {
	for _, s := range []string{
		`{"tool": "echo", "arguments": {"text": "hi"}}`,
		"```json\n{'tool': 'add', 'arguments': {'a': 1, 'b': 2,},}\n```",
		`{"tool": "rm_rf", "arguments": {}}`,
		`prose { with "braces" } and {"name": "echo"}`,
		`{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"echo","arguments":"{}"}}]}`,
		`{"output":[{"type":"function_call","call_id":"c","name":"delete_all","arguments":"{}"}]}`,
		`{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"echo","input":{}}]}`,
		`{"role":"model","parts":[{"functionCall":{"name":"echo","args":{}}}]}`,
		"{\"tool\": \"echo\" // comment\n}",
		`{{{{{{{{"tool":"echo"}`,
		`{"tool": "web_search", "tool": "echo"}`,
		"```json\n{\"tool\":\"web_search\"}\n{\"tool\":\"echo\"}\n```",
		`{"name": "web_search", "tool": "echo"} it's {note: it's} 'x'`,
		`{"tool": "web_search", "arguments": {"q": {"tool": "echo"}}`,
		`{/*{/*{"tool":"echo"}*/!`,
		"{\"tool\": \"echo\u201d, \"arguments\": {}}\r\n``json\n{'tool': 'add', 'arguments': {'a': 1, 'b': 2}}``",
	} {
		f.Add(s)
	}
	listed := map[string]bool{"add": true, "echo": true, "fail": true, "boom": true}
	f.Fuzz(func(t *testing.T, reply string) {
		var ran []string
		guard := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
			ran = append(ran, name)
			return next(ctx, name, args)
		})
		d := mcs.NewBaseDriver(&calcDriver{}, mcs.WithMiddleware(guard))
		for _, in := range []any{reply, []byte(reply)} {
			r := d.ProcessLLMResponse(context.Background(), in)
			for _, c := range r.Calls {
				if !listed[c.Name] {
					t.Fatalf("executed unlisted tool %q from %q", c.Name, reply)
				}
			}
			if (r.Calls == nil) != (r.Messages == nil) {
				t.Fatalf("Calls and Messages disagree: %+v", r)
			}
			if r.CallFailed && r.RetryPrompt == "" {
				t.Fatalf("failed without a retry prompt: %+v", r)
			}
		}
		for _, name := range ran {
			if !listed[name] {
				t.Fatalf("middleware saw unlisted tool %q", name)
			}
		}
		// The same reply streamed byte by byte runs the same calls with the same
		// outcomes (malformed owned calls fail in both paths), ends with nothing held,
		// and shows the whole reply when no call ran.
		if utf8.ValidString(reply) {
			want := d.ProcessLLMResponse(context.Background(), reply)
			buf := d.NewStreamBuffer()
			var got []mcs.CallRecord
			var shown strings.Builder
			for i := range len(reply) {
				buf.Add(reply[i : i+1])
				r := d.ProcessStream(context.Background(), buf)
				got = append(got, r.Calls...)
				shown.WriteString(buf.Text())
			}
			buf.Finish()
			r := d.ProcessStream(context.Background(), buf)
			got = append(got, r.Calls...)
			shown.WriteString(buf.Text())
			if r.CallPending {
				t.Fatalf("a call is still pending after the end of %q", reply)
			}
			for _, c := range got {
				if !listed[c.Name] {
					t.Fatalf("stream executed unlisted tool %q", c.Name)
				}
			}
			key := func(cs []mcs.CallRecord) []string {
				var out []string
				for _, c := range cs {
					args, _ := json.Marshal(c.Arguments)
					outcome := "ok " + mcs.ResultText(c.Result)
					if c.Err != nil {
						outcome = "failed"
						if errors.Is(c.Err, mcs.ErrMalformedCall) {
							outcome = "malformed"
						}
					}
					out = append(out, c.Name+" "+string(args)+" "+outcome)
				}
				return out
			}
			if diff := cmp.Diff(key(want.Calls), key(got)); diff != "" {
				t.Fatalf("stream and whole reply ran different calls for %q (-whole +stream):\n%s", reply, diff)
			}
			if len(got) == 0 && shown.String() != reply {
				t.Fatalf("no call ran, but the display lost text: shown %q of %q", shown.String(), reply)
			}
		}
	})
}

// FuzzStreamChunks feeds random provider chunks, one JSON document per line: the
// assemblers never panic, never run a tool the driver does not list, and hold
// nothing after the end of the stream.
func FuzzStreamChunks(f *testing.F) {
	evs := []event{textEv("Hi"), callEv("c1", "echo", `{"text":"x"}`), callEv("c2", "rm_rf", `{}`)}
	for _, chunks := range [][]string{chatChunks(evs), responsesChunks(evs), anthropicChunks(evs), geminiChunks(evs)} {
		f.Add(strings.Join(chunks, "\n"))
	}
	f.Add("{\"message\":{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"name\":\"echo\",\"arguments\":{}}}]},\"done\":true}")
	listed := map[string]bool{"add": true, "echo": true, "fail": true, "boom": true}
	f.Fuzz(func(t *testing.T, stream string) {
		d := mcs.NewBaseDriver(&calcDriver{})
		buf := d.NewStreamBuffer()
		check := func(r mcs.Response) {
			for _, c := range r.Calls {
				if !listed[c.Name] {
					t.Fatalf("ran unlisted tool %q", c.Name)
				}
			}
		}
		for line := range strings.Lines(stream) {
			buf.Add([]byte(line))
			check(d.ProcessStream(context.Background(), buf))
			buf.Text()
		}
		buf.Finish()
		r := d.ProcessStream(context.Background(), buf)
		check(r)
		if r.CallPending {
			t.Fatal("a call is still pending after the end of the stream")
		}
		buf.Text()
		buf.Message()
	})
}

// FuzzFastJSON: the fast path of decoding a text call gives exactly what
// encoding/json and the codec's rules give, or leaves the object to them.
func FuzzFastJSON(f *testing.F) {
	for _, s := range []string{
		`{"tool":"echo","arguments":{"text":"x","n":1.5e3,"l":[1,true,null,{"a":"b"}]}}`,
		`{"tool":"a","tool":"b"}`, `{"name":"x","tool":7}`, `{"tool":"x","args":"{\"a\":1}"}`,
		`{"tool":"x","arguments":[1]}`, `{"tool":"é","arguments":{"k\u00e9":"\ud83d\ude00"}}`,
		`{"tool":"x","arguments":{"a":-0.0,"b":1e400}}`, "{\"tool\":\"x\xff\"}", `{"tool":"x","arguments":null}`,
		`{"tool":"x","arguments":{"id":1234567890123456789,"n":[9007199254740993,-12345678901234567,1e20,100000000000000000000]}}`,
		`{"id":5,"name":"x","owner":"bob"}`, `{"name":"x"}`, `{"name":"x","name":"y"}`, `{"name":"x","input":null,"id":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		fast, fastBare, ok := mcs.DecodeCallFastForTest(src)
		if !ok {
			return
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(src), &m); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json refuses it: %v", src, err)
		}
		if err := mcs.UnmarshalJSONForTest([]byte(src), &m); err != nil {
			t.Fatalf("fast path accepted %q, the kernel's decoding refuses it: %v", src, err)
		}
		slow, slowBare := mcs.CallFromObjectForTest(m)
		if slowBare != fastBare {
			t.Fatalf("%q: bare is %v on the slow path, %v on the fast one", src, slowBare, fastBare)
		}
		if diff := cmp.Diff(slow, fast, cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })); diff != "" {
			t.Fatalf("%q: fast and slow differ (-slow +fast):\n%s", src, diff)
		}
	})
}

// FuzzOnePassObjects: decoding strict objects in one pass finds exactly the calls,
// names, arguments, errors and offsets that reading them byte by byte finds.
func FuzzOnePassObjects(f *testing.F) {
	for _, s := range []string{
		textCall,
		`a {"tool":"echo","arguments":{"text":"x"}} b {"tool":"add","arguments":{"a":1,"b":2}}`,
		"```json\n{\"tool\":\"echo\",\"arguments\":{}}\n```", `{"tool":"a","tool":"b"}`,
		`{"tool":"a","name":"b"}`, `{"name":"b","tool":"a"}`, `{"a{":1} {"tool":"x"}`, `{}{"tool":""}`,
		`{"tool":"x","arguments":"{\"a\":1}"}`, `{"tool":"x","arguments":[1]}`, `{"tool":"x",}`,
		`{"data":{"tool":"x"}}`, `{"tool":"x" {"tool":"y"}}`, `<think>{"tool":"x"}</think>{"tool":"y"}`,
		`{"tool":"x","arguments":{"k":"v"}}} {"tool":"y"`, `{"tool": "x\u0041"}`,
		`The record is {"id":5,"name":"x","owner":"bob"}.`, `it's {not} a call`, `{ word : 1} {a b} {w/ {x//c` + "\n" + `:1}`,
		`{ é } {$_-9 "tool":"x"} {tool:"x"} { }`, "```json\n{\"name\":\"x\"}\n```", `{"name":"x"} {"name":"y","args":{}}`,
	} {
		f.Add(s)
	}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	f.Fuzz(func(t *testing.T, text string) {
		slow := mcs.DecodeTextForTest(text, true)
		fast := mcs.DecodeTextForTest(text, false)
		if diff := cmp.Diff(slow, fast, cmp.Comparer(func(a, b error) bool { return errText(a) == errText(b) })); diff != "" {
			t.Fatalf("%q: one pass and byte by byte differ (-byte by byte +one pass):\n%s", text, diff)
		}
	})
}

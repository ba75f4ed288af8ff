package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/openai"
)

func sse(t testing.TB, name string) replay.Reply { return replay.SSE(t, "testdata/"+name+".sse") }

func newModel(t testing.TB, url string) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: url + "/v1", APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// summary renders the messages of a request, one line each, so that a test can
// compare what was sent round by round.
func summary(body map[string]any) []string {
	msgs, _ := body["messages"].([]any)
	out := make([]string, 0, len(msgs))
	for i, item := range msgs {
		m, _ := item.(map[string]any)
		role, _ := m["role"].(string)
		content, _ := m["content"].(string)
		switch {
		case role == "system" && i == 0:
			out = append(out, "system")
		case role == "tool":
			out = append(out, fmt.Sprintf("tool %v: %s", m["tool_call_id"], content))
		case role == "assistant":
			line := "assistant: " + content
			tcs, _ := m["tool_calls"].([]any)
			for _, tc := range tcs {
				c, _ := tc.(map[string]any)
				fn, _ := c["function"].(map[string]any)
				line += fmt.Sprintf(" [%v %v %v]", c["id"], fn["name"], fn["arguments"])
			}
			out = append(out, line)
		default:
			out = append(out, role+": "+content)
		}
	}
	return out
}

func toolNames(body map[string]any) []string {
	tools, _ := body["tools"].([]any)
	var names []string
	for _, t := range tools {
		fn, _ := t.(map[string]any)["function"].(map[string]any)
		names = append(names, fmt.Sprint(fn["name"]))
	}
	return names
}

func TestRunStreamingNative(t *testing.T) {
	const failed = `malformed tool call: the arguments of the call to "get_weather" are not valid JSON: json: cannot unmarshal array into Go value of type map[string]interface {}`
	tests := []struct {
		name    string
		replies []string
		text    string
		shown   string
		calls   []string // tool executions
		records []string // "id name err?" of Result.Calls
		rounds  [][]string
		usage   runner.Usage
	}{
		{
			name: "text only", replies: []string{"text_only"},
			text: "Hello there.", shown: "Hello there.",
			rounds: [][]string{{"system", "user: hi"}},
			usage:  runner.Usage{InputTokens: 12, OutputTokens: 3},
		},
		{
			name: "one tool call", replies: []string{"one_call", "answer_rome"},
			text: "It is sunny in Rome.", shown: "It is sunny in Rome.",
			calls:   []string{"get_weather map[city:Rome]"},
			records: []string{"call_1 get_weather ok"},
			rounds: [][]string{
				{"system", "user: hi"},
				// The model's own arguments text goes back as it wrote it.
				{"system", "user: hi", `assistant:  [call_1 get_weather {"city": "Rome"}]`, "tool call_1: sunny in Rome"},
			},
			usage: runner.Usage{InputTokens: 50, OutputTokens: 13},
		},
		{
			name: "text then a tool call", replies: []string{"text_then_call", "answer_rome"},
			text: "It is sunny in Rome.", shown: "Let me check the weather.It is sunny in Rome.",
			calls:   []string{"get_weather map[city:Rome]"},
			records: []string{"call_1 get_weather ok"},
			rounds: [][]string{
				{"system", "user: hi"},
				{"system", "user: hi", `assistant: Let me check the weather. [call_1 get_weather {"city":"Rome"}]`, "tool call_1: sunny in Rome"},
			},
			usage: runner.Usage{InputTokens: 50, OutputTokens: 17},
		},
		{
			name: "two parallel calls, interleaved arguments", replies: []string{"parallel", "answer_parallel"},
			text: "Sunny in Paris, 12:00 CET.", shown: "Sunny in Paris, 12:00 CET.",
			calls:   []string{"get_weather map[city:Paris]", "get_time map[zone:CET]"},
			records: []string{"call_a get_weather ok", "call_b get_time ok"},
			rounds: [][]string{
				{"system", "user: hi"},
				{"system", "user: hi", `assistant:  [call_a get_weather {"city":"Paris"}] [call_b get_time {"zone":"CET"}]`,
					"tool call_a: sunny in Paris", "tool call_b: 12:00 CET"},
			},
			usage: runner.Usage{InputTokens: 65, OutputTokens: 29},
		},
		{
			name: "malformed arguments, then a corrected call", replies: []string{"malformed", "corrected", "answer_rome"},
			text: "It is sunny in Rome.", shown: "It is sunny in Rome.",
			calls:   []string{"get_weather map[city:Rome]"},
			records: []string{"call_1 get_weather failed", "call_2 get_weather ok"},
			rounds: [][]string{
				{"system", "user: hi"},
				{"system", "user: hi", `assistant:  [call_1 get_weather {}]`, "tool call_1: " + failed, "user: RETRY"},
				{"system", "user: hi", `assistant:  [call_1 get_weather {}]`, "tool call_1: " + failed, "user: RETRY",
					`assistant:  [call_2 get_weather {"city":"Rome"}]`, "tool call_2: sunny in Rome"},
			},
			usage: runner.Usage{InputTokens: 90, OutputTokens: 17},
		},
		{
			name: "a call the driver does not own", replies: []string{"unowned", "answer_rome"},
			text: "It is sunny in Rome.", shown: "It is sunny in Rome.",
			calls:   []string{"get_weather map[city:Rome]"},
			records: []string{"call_1 get_weather ok", "call_2 weather__get_weather failed"},
			rounds: [][]string{
				{"system", "user: hi"},
				{"system", "user: hi",
					`assistant:  [call_1 get_weather {"city":"Rome"}] [call_2 weather__get_weather {"city":"Rome"}]`,
					"tool call_1: sunny in Rome",
					`tool call_2: unknown tool: tool "weather__get_weather" does not exist; the closest tools are "get_weather", "get_time"`},
			},
			usage: runner.Usage{InputTokens: 50, OutputTokens: 15},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replies []replay.Reply
			for _, r := range tt.replies {
				replies = append(replies, sse(t, r))
			}
			srv := replay.New(t, replies...)
			w := &replay.Weather{}
			var shown strings.Builder
			var onCall []string
			r := runner.New(w.Driver(), newModel(t, srv.URL), runner.WithNativeTools(true),
				runner.WithStream(func(s string) { shown.WriteString(s) }),
				runner.WithOnCall(func(c mcs.CallRecord) { onCall = append(onCall, c.ID+" "+c.Name) }))
			res, err := r.Run(context.Background(), nil, "hi")
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Text != tt.text {
				t.Errorf("Text = %q, want %q", res.Text, tt.text)
			}
			if shown.String() != tt.shown {
				t.Errorf("shown %q, want %q", shown.String(), tt.shown)
			}
			if diff := cmp.Diff(tt.calls, w.Calls()); diff != "" {
				t.Errorf("tool executions (-want +got):\n%s", diff)
			}
			var records []string
			for _, c := range res.Calls {
				state := "ok"
				if c.Err != nil {
					state = "failed"
				}
				records = append(records, c.ID+" "+c.Name+" "+state)
			}
			if diff := cmp.Diff(tt.records, records); diff != "" {
				t.Errorf("Result.Calls (-want +got):\n%s", diff)
			}
			if len(onCall) != len(res.Calls) {
				t.Errorf("OnCall saw %d calls, Result has %d", len(onCall), len(res.Calls))
			}
			bodies := srv.Bodies(t)
			var got [][]string
			for i, b := range bodies {
				got = append(got, retryless(summary(b)))
				if b["stream"] != true {
					t.Errorf("request %d: stream = %v, want true", i+1, b["stream"])
				}
				if b["model"] != "gpt-test" {
					t.Errorf("request %d: model = %v", i+1, b["model"])
				}
				if diff := cmp.Diff([]string{"get_weather", "get_time"}, toolNames(b)); diff != "" {
					t.Errorf("request %d: tools (-want +got):\n%s", i+1, diff)
				}
			}
			if diff := cmp.Diff(tt.rounds, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if res.Rounds != len(tt.rounds) {
				t.Errorf("Rounds = %d, want %d", res.Rounds, len(tt.rounds))
			}
			if res.Usage != tt.usage {
				t.Errorf("Usage = %+v, want %+v", res.Usage, tt.usage)
			}
			// The history of the turn is the last request's messages plus the answer.
			wantHistory := append(append([]string(nil), got[len(got)-1][1:]...), "assistant: "+tt.text)
			if diff := cmp.Diff(wantHistory, retryless(summary(map[string]any{"messages": toAny(res.History)}))); diff != "" {
				t.Errorf("Result.History (-want +got):\n%s", diff)
			}
			answered(t, bodies[len(bodies)-1])
		})
	}
}

// retryless replaces the text of retry prompts by RETRY.
func retryless(lines []string) []string {
	for i, l := range lines {
		if strings.HasPrefix(l, "user: The call to the tool") {
			lines[i] = "user: RETRY"
		}
	}
	return lines
}

func toAny(h []map[string]any) []any {
	b, _ := json.Marshal(h)
	var out []any
	_ = json.Unmarshal(b, &out)
	return out
}

// answered checks that every tool-call id of every assistant message is answered
// by a tool message.
func answered(t *testing.T, body map[string]any) {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	want := map[string]bool{}
	for _, item := range msgs {
		m := item.(map[string]any)
		if tcs, ok := m["tool_calls"].([]any); ok {
			for _, tc := range tcs {
				want[fmt.Sprint(tc.(map[string]any)["id"])] = true
			}
		}
		if m["role"] == "tool" {
			delete(want, fmt.Sprint(m["tool_call_id"]))
		}
	}
	if len(want) > 0 {
		t.Errorf("tool-call ids without an answer: %v", want)
	}
}

func TestRunStreamingTextProtocol(t *testing.T) {
	tests := []struct {
		name    string
		replies []string
		shown   string
		calls   []string
		second  []string
	}{
		{
			name: "text call", replies: []string{"text_call", "answer_rome"},
			shown: "Checking. It is sunny in Rome.", calls: []string{"get_weather map[city:Rome]"},
			second: []string{"system", "user: hi", `assistant: Checking. {"tool": "get_weather", "arguments": {"city": "Rome"}}`,
				framed("get_weather", map[string]any{"city": "Rome"}, "sunny in Rome")},
		},
		{
			name: "text call of a tool that does not exist", replies: []string{"text_unowned", "answer_rome"},
			shown: `{"tool": "get_wether", "arguments": {"city": "Rome"}}It is sunny in Rome.`,
			second: []string{"system", "user: hi", `assistant: {"tool": "get_wether", "arguments": {"city": "Rome"}}`,
				"user: The call to the tool 'get_wether' failed: unknown tool: tool \"get_wether\" does not exist; the closest tools are \"get_weather\", \"get_time\"\n" +
					"Check the tool name and the arguments against the tool list and try again, or answer the user without the tool."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replies []replay.Reply
			for _, r := range tt.replies {
				replies = append(replies, sse(t, r))
			}
			srv := replay.New(t, replies...)
			w := &replay.Weather{}
			var shown strings.Builder
			r := runner.New(w.Driver(), newModel(t, srv.URL), runner.WithStream(func(s string) { shown.WriteString(s) }))
			res, err := r.Run(context.Background(), nil, "hi")
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if shown.String() != tt.shown {
				t.Errorf("shown %q, want %q", shown.String(), tt.shown)
			}
			if diff := cmp.Diff(tt.calls, w.Calls()); diff != "" {
				t.Errorf("tool executions (-want +got):\n%s", diff)
			}
			bodies := srv.Bodies(t)
			if len(bodies) != 2 {
				t.Fatalf("%d requests, want 2", len(bodies))
			}
			for i, b := range bodies {
				if _, ok := b["tools"]; ok {
					t.Errorf("request %d sent native tools in text mode", i+1)
				}
				sys := b["messages"].([]any)[0].(map[string]any)["content"].(string)
				if !strings.Contains(sys, "get_weather") {
					t.Errorf("request %d: the system message does not list the tools", i+1)
				}
			}
			if diff := cmp.Diff(tt.second, summary(bodies[1])); diff != "" {
				t.Errorf("second request (-want +got):\n%s", diff)
			}
			if res.Text != "It is sunny in Rome." {
				t.Errorf("Text = %q", res.Text)
			}
		})
	}
}

func TestRunNonStreaming(t *testing.T) {
	call := `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls",
		"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}}],
		"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14}}`
	answer := `{"id":"c2","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop",
		"message":{"role":"assistant","content":"Sunny in Oslo."}}],"usage":{"prompt_tokens":20,"completion_tokens":3,"total_tokens":23}}`
	srv := replay.New(t, replay.JSON(200, call), replay.JSON(200, answer))
	w := &replay.Weather{}
	r := runner.New(w.Driver(), newModel(t, srv.URL), runner.WithNativeTools(true))
	history := []map[string]any{{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "yes"}}
	res, err := r.Run(context.Background(), history, "weather in Oslo?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Sunny in Oslo." || res.Usage != (runner.Usage{InputTokens: 30, OutputTokens: 7}) || res.Rounds != 2 {
		t.Errorf("Result = %q %+v %d", res.Text, res.Usage, res.Rounds)
	}
	bodies := srv.Bodies(t)
	want := []string{"system", "user: earlier", "assistant: yes", "user: weather in Oslo?",
		`assistant:  [call_1 get_weather {"city":"Oslo"}]`, "tool call_1: sunny in Oslo"}
	if diff := cmp.Diff(want, summary(bodies[1])); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	if _, ok := bodies[0]["stream"]; ok {
		t.Errorf("a non-streaming run sent stream = %v", bodies[0]["stream"])
	}
	if srv.Paths()[0] != "/v1/chat/completions" {
		t.Errorf("path %q", srv.Paths()[0])
	}
	if len(history) != 2 {
		t.Errorf("Run modified the caller's history")
	}
	// The tool schema went out unchanged.
	fn := bodies[0]["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	wantParams := map[string]any{"type": "object", "required": []any{"city"},
		"properties": map[string]any{"city": map[string]any{"type": "string", "minLength": float64(1), "description": "City name"}}}
	if diff := cmp.Diff(wantParams, fn["parameters"]); diff != "" {
		t.Errorf("tool schema (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	closed := replay.New(t)
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name    string
		replies []replay.Reply
		url     string
		retries int
		kind    error
		status  int
		says    []string
		served  int
	}{
		{name: "401", replies: []replay.Reply{replay.JSON(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)},
			kind: runner.ErrUnauthorized, status: 401, says: []string{"API key rejected", "Incorrect API key", "OPENAI_API_KEY"}, served: 1},
		{name: "429 after the SDK's retries", retries: 2,
			replies: []replay.Reply{rate(), rate(), rate()},
			kind:    runner.ErrRateLimited, status: 429, says: []string{"rate limited", "after 2 retries", "try again"}, served: 3},
		{name: "unknown model", replies: []replay.Reply{replay.JSON(404, `{"error":{"message":"The model 'gpt-nope' does not exist","type":"invalid_request_error","code":"model_not_found"}}`)},
			kind: runner.ErrUnknownModel, status: 404, says: []string{"unknown model", "model name"}, served: 1},
		{name: "unreachable", url: closedURL, kind: runner.ErrUnreachable, says: []string{closedURL + "/v1", "--base-url", "OPENAI_BASE_URL"}},
		{name: "error event mid-stream", replies: []replay.Reply{sse(t, "error_mid_stream")},
			says: []string{"the stream reported an error", "server had an error"}, served: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := replay.New(t, tt.replies...)
			url := srv.URL
			if tt.url != "" {
				url = tt.url
			}
			retries := -1
			if tt.retries > 0 {
				retries = tt.retries
			}
			m, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: url + "/v1", APIKey: "sk-test", MaxRetries: retries})
			if err != nil {
				t.Fatal(err)
			}
			var shown strings.Builder
			r := runner.New((&replay.Weather{}).Driver(), m, runner.WithStream(func(s string) { shown.WriteString(s) }))
			res, err := r.Run(context.Background(), nil, "hi")
			if err == nil {
				t.Fatal("Run succeeded")
			}
			var me *runner.ModelError
			if !errors.As(err, &me) {
				t.Fatalf("error %v is not a *runner.ModelError", err)
			}
			if tt.kind != nil && !errors.Is(err, tt.kind) {
				t.Errorf("error %v does not wrap %v", err, tt.kind)
			}
			if me.Status != tt.status {
				t.Errorf("Status = %d, want %d", me.Status, tt.status)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if tt.url == "" && srv.Requests() != tt.served {
				t.Errorf("%d requests served, want %d", srv.Requests(), tt.served)
			}
			if res == nil || len(res.History) != 1 {
				t.Errorf("Result after an error: %+v", res)
			}
			if tt.name == "error event mid-stream" && shown.String() != "Hello" {
				t.Errorf("shown %q before the error, want %q", shown.String(), "Hello")
			}
		})
	}
}

func rate() replay.Reply {
	r := replay.JSON(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	r.Header = map[string]string{"retry-after-ms": "1"}
	return r
}

func TestNewErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	_, err := openai.New(openai.Config{Model: "gpt-4o-mini"})
	if !errors.Is(err, runner.ErrNoAPIKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	if _, err := openai.New(openai.Config{}); err == nil || !strings.Contains(err.Error(), "Config.Model") {
		t.Errorf("no model: %v", err)
	}
	if _, err := openai.New(openai.Config{Model: "m", BaseURL: "localhost:11434"}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("bad base URL: %v", err)
	}
	// A local server needs no key.
	if _, err := openai.New(openai.Config{Model: "llama3.2", BaseURL: "http://localhost:11434/v1"}); err != nil {
		t.Errorf("keyless local server: %v", err)
	}
}

func TestCancel(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	first := sse(t, "text_only")
	first.Body = first.Body[:strings.Index(string(first.Body), "\n\n")+2] // the first chunk only
	first.Hold = hold
	first.Body = append(first.Body, []byte(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`+"\n\n")...)
	srv := replay.New(t, first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := runner.New((&replay.Weather{}).Driver(), newModel(t, srv.URL), runner.WithStream(func(string) { cancel() }))
	_, err := r.Run(ctx, nil, "hi")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v, want context.Canceled", err)
	}
}

var _ = http.StatusOK

// framed is a text-protocol tool result as the default codec puts it in the
// history: a user turn that frames the content as data the tool returned.
func framed(tool string, args map[string]any, content string) string {
	m := mcs.DefaultPromptStrategy().ResultMessage(mcs.ToolCall{Name: tool, Arguments: args}, content, false)
	return fmt.Sprintf("%v: %v", m["role"], m["content"])
}

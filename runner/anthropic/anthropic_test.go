package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/anthropic"
)

func sse(t testing.TB, name string) replay.Reply { return replay.SSE(t, "testdata/"+name+".sse") }

func newModel(t testing.TB, url string) *anthropic.Model {
	t.Helper()
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: url, APIKey: "sk-ant-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// summary renders the turns of a request, one line per turn or block.
func summary(body map[string]any) []string {
	msgs, _ := body["messages"].([]any)
	var out []string
	for _, item := range msgs {
		m, _ := item.(map[string]any)
		role, _ := m["role"].(string)
		switch c := m["content"].(type) {
		case string:
			out = append(out, role+": "+c)
		case []any:
			for _, b := range c {
				blk, _ := b.(map[string]any)
				switch blk["type"] {
				case "text":
					out = append(out, fmt.Sprintf("%s: %v", role, blk["text"]))
				case "tool_use":
					in, _ := json.Marshal(blk["input"])
					out = append(out, fmt.Sprintf("%s: use %v %v %s", role, blk["id"], blk["name"], in))
				case "tool_result":
					e := ""
					if blk["is_error"] == true {
						e = " (error)"
					}
					out = append(out, fmt.Sprintf("%s: result %v%s: %v", role, blk["tool_use_id"], e, blk["content"]))
				default:
					out = append(out, fmt.Sprintf("%s: %v block", role, blk["type"]))
				}
			}
		default:
			out = append(out, fmt.Sprintf("%s: %T", role, c))
		}
	}
	return out
}

func retryless(lines []string) []string {
	for i, l := range lines {
		if strings.HasPrefix(l, "user: The call to the tool") {
			lines[i] = "user: RETRY"
		}
	}
	return lines
}

func TestRunStreamingNative(t *testing.T) {
	const failed = `malformed tool call: the input of the call to "get_weather" are not valid JSON: json: cannot unmarshal array into Go value of type map[string]interface {}`
	tests := []struct {
		name    string
		replies []string
		text    string
		shown   string
		calls   []string
		rounds  [][]string
		usage   runner.Usage
	}{
		{
			name: "text only", replies: []string{"text_only"},
			text: "Hello there.", shown: "Hello there.",
			rounds: [][]string{{"user: hi"}},
			usage:  runner.Usage{InputTokens: 12, OutputTokens: 3},
		},
		{
			name: "one tool call", replies: []string{"one_call", "answer_rome"},
			text: "It is sunny in Rome.", shown: "It is sunny in Rome.",
			calls: []string{"get_weather map[city:Rome]"},
			rounds: [][]string{
				{"user: hi"},
				{"user: hi", `assistant: use toolu_1 get_weather {"city":"Rome"}`, "user: result toolu_1: sunny in Rome"},
			},
			usage: runner.Usage{InputTokens: 50, OutputTokens: 13},
		},
		{
			name: "text then a tool call", replies: []string{"text_then_call", "answer_rome"},
			text: "It is sunny in Rome.", shown: "Let me check the weather.It is sunny in Rome.",
			calls: []string{"get_weather map[city:Rome]"},
			rounds: [][]string{
				{"user: hi"},
				{"user: hi", "assistant: Let me check the weather.", `assistant: use toolu_1 get_weather {"city":"Rome"}`, "user: result toolu_1: sunny in Rome"},
			},
			usage: runner.Usage{InputTokens: 50, OutputTokens: 17},
		},
		{
			name: "two parallel calls, interleaved arguments", replies: []string{"parallel", "answer_parallel"},
			text: "Sunny in Paris, 12:00 CET.", shown: "Sunny in Paris, 12:00 CET.",
			calls: []string{"get_weather map[city:Paris]", "get_time map[zone:CET]"},
			rounds: [][]string{
				{"user: hi"},
				{"user: hi", `assistant: use toolu_a get_weather {"city":"Paris"}`, `assistant: use toolu_b get_time {"zone":"CET"}`,
					"user: result toolu_a: sunny in Paris", "user: result toolu_b: 12:00 CET"},
			},
			usage: runner.Usage{InputTokens: 65, OutputTokens: 29},
		},
		{
			name: "malformed arguments, then a corrected call", replies: []string{"malformed", "corrected", "answer_rome"},
			text: "It is sunny in Rome.", shown: "It is sunny in Rome.",
			calls: []string{"get_weather map[city:Rome]"},
			rounds: [][]string{
				{"user: hi"},
				{"user: hi", `assistant: use toolu_1 get_weather {}`, "user: result toolu_1 (error): " + failed, "user: RETRY"},
				{"user: hi", `assistant: use toolu_1 get_weather {}`, "user: result toolu_1 (error): " + failed, "user: RETRY",
					`assistant: use toolu_2 get_weather {"city":"Rome"}`, "user: result toolu_2: sunny in Rome"},
			},
			usage: runner.Usage{InputTokens: 90, OutputTokens: 17},
		},
		{
			name: "a call the driver does not own", replies: []string{"unowned", "answer_rome"},
			text: "It is sunny in Rome.", shown: "It is sunny in Rome.",
			calls: []string{"get_weather map[city:Rome]"},
			rounds: [][]string{
				{"user: hi"},
				{"user: hi", `assistant: use toolu_1 get_weather {"city":"Rome"}`, `assistant: use toolu_2 weather__get_weather {"city":"Rome"}`,
					"user: result toolu_1: sunny in Rome",
					`user: result toolu_2 (error): unknown tool: tool "weather__get_weather" does not exist; the closest tools are "get_weather", "get_time"`},
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
			r := runner.New(w.Driver(), newModel(t, srv.URL), runner.WithNativeTools(true),
				runner.WithStream(func(s string) { shown.WriteString(s) }))
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
			bodies := srv.Bodies(t)
			var got [][]string
			for i, b := range bodies {
				got = append(got, retryless(summary(b)))
				if b["stream"] != true || b["model"] != "claude-test" || b["max_tokens"] != float64(anthropic.DefaultMaxTokens) {
					t.Errorf("request %d: stream %v model %v max_tokens %v", i+1, b["stream"], b["model"], b["max_tokens"])
				}
				sys, _ := b["system"].([]any)
				if len(sys) != 1 {
					t.Errorf("request %d: system = %v", i+1, b["system"])
				}
				tools, _ := b["tools"].([]any)
				if len(tools) != 2 || tools[0].(map[string]any)["name"] != "get_weather" || tools[0].(map[string]any)["input_schema"] == nil {
					t.Errorf("request %d: tools = %v", i+1, b["tools"])
				}
			}
			if diff := cmp.Diff(tt.rounds, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if res.Usage != tt.usage {
				t.Errorf("Usage = %+v, want %+v", res.Usage, tt.usage)
			}
			if srv.Paths()[0] != "/v1/messages" {
				t.Errorf("path %q", srv.Paths()[0])
			}
			answered(t, bodies[len(bodies)-1])
		})
	}
}

// answered checks that every tool_use block is answered by a tool_result in the
// next turn.
func answered(t *testing.T, body map[string]any) {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	for i, item := range msgs {
		m := item.(map[string]any)
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			blk := b.(map[string]any)
			if blk["type"] != "tool_use" {
				continue
			}
			ok := false
			if i+1 < len(msgs) {
				next, _ := msgs[i+1].(map[string]any)["content"].([]any)
				for _, nb := range next {
					if r := nb.(map[string]any); r["type"] == "tool_result" && r["tool_use_id"] == blk["id"] {
						ok = true
					}
				}
			}
			if !ok {
				t.Errorf("tool_use %v has no tool_result in the next turn", blk["id"])
			}
		}
	}
}

// A codec may put the text protocol's results in system-role messages (the
// reference's choice); the Messages API has no such role inside messages, so they
// go out as user turns.
func TestRunTextProtocolSystemResults(t *testing.T) {
	srv := replay.New(t, sse(t, "text_call"), sse(t, "answer_rome"))
	w := &replay.Weather{}
	var shown strings.Builder
	ps, err := mcs.ParsePromptStrategy("system-results.toml", []byte("[history]\nresult_role = \"system\"\nresult_template = \"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := runner.New(w.Driver(mcs.WithPromptStrategy(ps)), newModel(t, srv.URL), runner.WithStream(func(s string) { shown.WriteString(s) }))
	res, err := r.Run(context.Background(), nil, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if shown.String() != "Checking. It is sunny in Rome." || res.Text != "It is sunny in Rome." {
		t.Errorf("shown %q, Text %q", shown.String(), res.Text)
	}
	bodies := srv.Bodies(t)
	want := []string{"user: hi", `assistant: Checking. {"tool": "get_weather", "arguments": {"city": "Rome"}}`, "user: sunny in Rome"}
	if diff := cmp.Diff(want, summary(bodies[1])); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	if _, ok := bodies[0]["tools"]; ok {
		t.Error("text mode sent native tools")
	}
	// The history keeps the wire shape the driver gave (the system role).
	if res.History[2]["role"] != "system" {
		t.Errorf("history entry 3 = %v", res.History[2])
	}
}

func TestRunNonStreaming(t *testing.T) {
	call := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"tool_use","stop_sequence":null,
		"content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Oslo"}}],
		"usage":{"input_tokens":10,"output_tokens":4,"cache_read_input_tokens":5}}`
	answer := `{"id":"msg_2","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn","stop_sequence":null,
		"content":[{"type":"text","text":"Sunny in Oslo."}],"usage":{"input_tokens":20,"output_tokens":3}}`
	srv := replay.New(t, replay.JSON(200, call), replay.JSON(200, answer))
	r := runner.New((&replay.Weather{}).Driver(), newModel(t, srv.URL), runner.WithNativeTools(true))
	res, err := r.Run(context.Background(), nil, "weather in Oslo?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Sunny in Oslo." || res.Usage != (runner.Usage{InputTokens: 35, OutputTokens: 7}) {
		t.Errorf("Result = %q %+v", res.Text, res.Usage)
	}
	want := []string{"user: weather in Oslo?", "assistant: Looking.", `assistant: use toolu_1 get_weather {"city":"Oslo"}`, "user: result toolu_1: sunny in Oslo"}
	if diff := cmp.Diff(want, summary(srv.Bodies(t)[1])); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	// Only role and content of the response go into the history.
	last := res.History[len(res.History)-1]
	if len(last) != 2 || last["role"] != "assistant" {
		t.Errorf("final history entry %v", last)
	}
}

func TestToolKeepsTheSchema(t *testing.T) {
	params := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"pet": map[string]any{"$ref": "#/$defs/pet"}, "n": map[string]any{"type": "integer", "minimum": 1}},
		"required":             []any{"pet"},
		"additionalProperties": false,
		"$defs":                map[string]any{"pet": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}},
	}
	tool := mcs.FunctionTool{Name: "add_pet", Description: "Add a pet.", Parameters: params}
	got := anthropic.Tool(tool)
	want := map[string]any{"name": "add_pet", "description": "Add a pet.", "input_schema": params}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tool (-want +got):\n%s", diff)
	}
	// And it reaches the wire unchanged.
	srv := replay.New(t, sse(t, "text_only"))
	m := newModel(t, srv.URL)
	if _, err := m.Stream(context.Background(), runner.Request{Messages: []map[string]any{{"role": "user", "content": "hi"}},
		Tools: []mcs.FunctionTool{tool}}, nil); err != nil {
		t.Fatal(err)
	}
	sent := srv.Bodies(t)[0]["tools"].([]any)[0]
	var wantJSON any
	b, _ := json.Marshal(want)
	_ = json.Unmarshal(b, &wantJSON)
	if diff := cmp.Diff(wantJSON, sent); diff != "" {
		t.Errorf("tool on the wire (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	closed := replay.New(t)
	closedURL := closed.URL
	closed.Close()
	rate := replay.JSON(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your rate limit"}}`)
	rate.Header = map[string]string{"retry-after-ms": "1"}
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
		{name: "401", replies: []replay.Reply{replay.JSON(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)},
			kind: runner.ErrUnauthorized, status: 401, says: []string{"API key rejected", "invalid x-api-key", "ANTHROPIC_API_KEY"}, served: 1},
		{name: "429 after the SDK's retries", retries: 2, replies: []replay.Reply{rate, rate, rate},
			kind: runner.ErrRateLimited, status: 429, says: []string{"rate limited", "after 2 retries"}, served: 3},
		{name: "unknown model", replies: []replay.Reply{replay.JSON(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`)},
			kind: runner.ErrUnknownModel, status: 404, says: []string{"unknown model", "model name"}, served: 1},
		{name: "unreachable", url: closedURL, kind: runner.ErrUnreachable, says: []string{closedURL, "--base-url", "ANTHROPIC_BASE_URL"}},
		{name: "error event mid-stream", replies: []replay.Reply{sse(t, "error_mid_stream")},
			says: []string{"the stream reported an error", "Overloaded"}, served: 1},
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
			m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: url, APIKey: "k", MaxRetries: retries})
			if err != nil {
				t.Fatal(err)
			}
			var shown strings.Builder
			r := runner.New((&replay.Weather{}).Driver(), m, runner.WithStream(func(s string) { shown.WriteString(s) }))
			_, err = r.Run(context.Background(), nil, "hi")
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
			if tt.name == "error event mid-stream" && shown.String() != "Hello" {
				t.Errorf("shown %q before the error", shown.String())
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	_, err := anthropic.New(anthropic.Config{Model: "claude-sonnet-4-5"})
	if !errors.Is(err, runner.ErrNoAPIKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	if _, err := anthropic.New(anthropic.Config{APIKey: "k"}); err == nil || !strings.Contains(err.Error(), "Config.Model") {
		t.Errorf("no model: %v", err)
	}
}

func TestCancel(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	first := sse(t, "text_only")
	cut := strings.Index(string(first.Body), `" there."`)
	first.Body = first.Body[:strings.LastIndex(string(first.Body[:cut]), "event:")]
	first.Hold = hold
	srv := replay.New(t, first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := runner.New((&replay.Weather{}).Driver(), newModel(t, srv.URL), runner.WithStream(func(string) { cancel() }))
	_, err := r.Run(ctx, nil, "hi")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v, want context.Canceled", err)
	}
}

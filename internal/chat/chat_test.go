package chat_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/internal/chat"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/runner/openai"
)

const petSpec = `openapi: 3.0.3
info: {title: Pets, version: 1.0.0}
paths:
  /pets/findByStatus:
    get:
      operationId: findPetsByStatus
      summary: Finds pets by status
      parameters:
        - {name: status, in: query, required: true, schema: {type: string, enum: [available, sold]}}
      responses: {"200": {description: The pets}}
`

const sold = `[{"name":"Rex","status":"sold"},{"name":"Tom","status":"sold"}]`

// petStore serves the pet API and records the queries it answered.
func petStore(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, sold)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), queries...)
	}
}

func restDriver(t *testing.T, baseURL string, in io.Reader, out io.Writer) *rest.Driver {
	t.Helper()
	d, err := rest.New(rest.Config{Spec: []byte(petSpec), BaseURL: baseURL},
		mcs.WithMiddleware(permission.New(permission.Prompt(in, out))),
		mcs.WithNativeTools(func(string) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func model(t *testing.T, url string) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: url + "/v1", APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestChatEndToEnd(t *testing.T) {
	for _, noStream := range []bool{false, true} {
		name := "stream"
		if noStream {
			name = "no-stream"
		}
		t.Run(name, func(t *testing.T) {
			pets, queries := petStore(t)
			var llm *replay.Server
			if noStream {
				llm = replay.New(t,
					replay.JSON(200, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"findPetsByStatus","arguments":"{\"status\":\"sold\"}"}}]}}]}`),
					replay.JSON(200, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Two pets are sold: Rex and Tom."}}]}`),
					replay.JSON(200, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hello again."}}]}`))
			} else {
				llm = replay.New(t, replay.SSE(t, "testdata/find_sold.sse"), replay.SSE(t, "testdata/answer_sold.sse"), replay.SSE(t, "testdata/hello.sse"))
			}
			in := strings.NewReader("Which pets are sold?\ny\n/tools\n/reset\nhello\n")
			var out strings.Builder
			sw := chat.NewTerminal(&syncWriter{w: &out})
			d := restDriver(t, pets.URL, in, sw)
			err := chat.Run(context.Background(), chat.Config{Driver: d, Model: model(t, llm.URL), In: in, Out: sw, Native: true, NoStream: noStream})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := out.String()
			for _, want := range []string{
				"mcs chat with gpt-test",
				`findPetsByStatus`, // the consent question names the tool
				"→ findPetsByStatus {\"status\":\"sold\"}\n← 63 bytes\n",
				"Two pets are sold: Rex and Tom.\n",
				"  findPetsByStatus  Finds pets by status\n",
				"(a new conversation starts)\n",
				"Hello again.\n",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
			if !noStream && !strings.Contains(got, "> Let me look.\nTool \"findPetsByStatus\" on driver") {
				t.Errorf("the streamed text before the call is not shown before the call line:\n%s", got)
			}
			if q := queries(); len(q) != 1 || q[0] != "/pets/findByStatus?status=sold" {
				t.Errorf("pet store queries %v", q)
			}
			bodies := llm.Bodies(t)
			if len(bodies) != 3 {
				t.Fatalf("%d model requests, want 3", len(bodies))
			}
			if n := len(bodies[1]["messages"].([]any)); n != 4 { // system, user, assistant, tool
				t.Errorf("second request has %d messages, want 4", n)
			}
			// After /reset the history is gone: system message and the new question.
			if n := len(bodies[2]["messages"].([]any)); n != 2 {
				t.Errorf("request after /reset has %d messages, want 2", n)
			}
		})
	}
}

func TestChatConsentDenied(t *testing.T) {
	pets, queries := petStore(t)
	llm := replay.New(t, replay.SSE(t, "testdata/find_sold.sse"), replay.SSE(t, "testdata/hello.sse"))
	in := strings.NewReader("Which pets are sold?\nn\n")
	var out strings.Builder
	d := restDriver(t, pets.URL, in, &out)
	if err := chat.Run(context.Background(), chat.Config{Driver: d, Model: model(t, llm.URL), In: in, Out: &out, Native: true}); err != nil {
		t.Fatal(err)
	}
	if len(queries()) != 0 {
		t.Errorf("the tool ran without consent: %v", queries())
	}
	if !strings.Contains(out.String(), "→ findPetsByStatus") {
		t.Errorf("no call line:\n%s", out.String())
	}
}

func TestChatUnreachable(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	url := gone.URL
	gone.Close()
	var out strings.Builder
	d := mcs.NewBaseDriver(&replay.Weather{})
	err := chat.Run(context.Background(), chat.Config{Driver: d, Model: model(t, url), In: strings.NewReader("hi\n"), Out: &out,
		BaseURLHint: "--base-url URL or OPENAI_BASE_URL"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"error: runner: round 1: openai model", "model endpoint unreachable",
		"The model could not be reached at " + url + "/v1. Start the server there, or point the chat elsewhere with --base-url URL or OPENAI_BASE_URL."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestChatCommandsAndEOF(t *testing.T) {
	var out strings.Builder
	d := mcs.NewBaseDriver(&replay.Weather{})
	llm := replay.New(t)
	err := chat.Run(context.Background(), chat.Config{Driver: d, Model: model(t, llm.URL), In: strings.NewReader("\n/nope\x1b[2J\n/help\n/quit\nnot read\n"), Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "unknown command /nope\uFFFD[2J") || strings.Contains(got, "\x1b") {
		t.Errorf("unknown command not reported safely:\n%q", got)
	}
	if strings.Count(got, "commands: /tools") != 3 { // greeting, unknown command, /help
		t.Errorf("help shown %d times:\n%s", strings.Count(got, "commands: /tools"), got)
	}
	if llm.Requests() != 0 {
		t.Errorf("commands reached the model")
	}
}

// Ctrl-C while the chat waits for a line ends it cleanly.
func TestChatCancelWhileWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prompted := make(chan struct{})
	out := &signalWriter{prompt: prompted}
	done := make(chan error, 1)
	go func() {
		done <- chat.Run(ctx, chat.Config{Driver: mcs.NewBaseDriver(&replay.Weather{}), Model: model(t, "http://127.0.0.1:1"), In: pr, Out: out})
	}()
	<-prompted
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after Ctrl-C: %v", err)
	}
}

// Ctrl-C while the model streams ends the question and the chat cleanly.
func TestChatCancelWhileStreaming(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	first := replay.SSE(t, "testdata/answer_sold.sse")
	first.Body = first.Body[:strings.Index(string(first.Body), "\n\n")+2]
	first.Hold = hold
	llm := replay.New(t, first)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelWriter{on: "Two pets", cancel: cancel}
	err := chat.Run(ctx, chat.Config{Driver: mcs.NewBaseDriver(&replay.Weather{}), Model: model(t, llm.URL), In: strings.NewReader("hi\nnever read\n"), Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.b.String(), "error") {
		t.Errorf("a cancelled question is reported as an error:\n%s", out.b.String())
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

type signalWriter struct {
	once   sync.Once
	prompt chan struct{}
}

func (s *signalWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "> ") {
		s.once.Do(func() { close(s.prompt) })
	}
	return len(p), nil
}

type cancelWriter struct {
	b      strings.Builder
	on     string
	cancel func()
}

func (c *cancelWriter) Write(p []byte) (int, error) {
	c.b.Write(p)
	if strings.Contains(string(p), c.on) {
		c.cancel()
	}
	return len(p), nil
}

var _ = errors.New

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/internal/chat"
	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/middleware/tracing"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/openai"
)

const chatPetSpec = `openapi: 3.0.3
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

const chatSold = `[{"name":"Rex","status":"sold"},{"name":"Tom","status":"sold"}]`

// chatFixture is a pet store on loopback, a stack file over it that asks
// before every call, and a replaying model server.
type chatFixture struct {
	stackFile string
	llm       *replay.Server
	queries   func() []string
}

func newChatFixture(t *testing.T, replies ...replay.Reply) chatFixture {
	t.Helper()
	var mu sync.Mutex
	var queries []string
	pets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, chatSold)
	}))
	t.Cleanup(pets.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pets.yaml"), []byte(chatPetSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf(`[[driver]]
label = "pets"
type = "rest"
spec = "pets.yaml"
base_url = %q

[orchestrator]
strategy = ["always_namespacing"]

[middleware.permission]
ask = true
`, pets.URL)
	file := filepath.Join(dir, "mcs.toml")
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return chatFixture{stackFile: file, llm: replay.New(t, replies...), queries: func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), queries...)
	}}
}

func chatReplies(t *testing.T) []replay.Reply {
	return []replay.Reply{replay.SSE(t, "testdata/chat/find_sold.sse"), replay.SSE(t, "testdata/chat/answer_sold.sse")}
}

// TestChatEndToEnd runs mcs chat with piped input against a replaying model
// server and a REST driver over a pet store: the model calls a tool, the
// permission middleware asks on the chat's terminal, the answer comes from the
// same input, and the final answer is printed. Each model request is a
// "chat {model}" span.
func TestChatEndToEnd(t *testing.T) {
	f := newChatFixture(t, chatReplies(t)...)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	r := mcsRun(t, "Which pets are sold?\ny\n/tools\n", "chat", "--stack", f.stackFile,
		"--model", "gpt-test", "--base-url", f.llm.URL+"/v1", "--native")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := `mcs chat with gpt-test (commands: /tools lists the tools, /reset starts a new conversation, /quit (or Ctrl-D) ends the chat)
> Let me look.
Tool "pets__findPetsByStatus" (driver "pets", via the orchestrator) wants to run with these arguments:
{
  "status": "sold"
}
Allow it? y (yes), n (no), a (always allow this tool): 
→ pets__findPetsByStatus {"status":"sold"}
← 63 bytes
Two pets are sold: Rex and Tom.
>   pets__findPetsByStatus  [pets] Finds pets by status
> 
`
	if diff := cmp.Diff(want, r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if q := f.queries(); !cmp.Equal(q, []string{"/pets/findByStatus?status=sold"}) {
		t.Errorf("pet store queries %v", q)
	}
	bodies := f.llm.Bodies(t)
	if len(bodies) != 2 {
		t.Fatalf("%d model requests, want 2", len(bodies))
	}
	if tools, _ := bodies[0]["tools"].([]any); len(tools) != 1 {
		t.Errorf("first request has %d native tools, want 1", len(tools))
	}
	msgs, _ := bodies[1]["messages"].([]any)
	if len(msgs) != 4 { // system, user, assistant with the call, tool result
		t.Fatalf("second request has %d messages, want 4: %v", len(msgs), msgs)
	}
	if res, _ := msgs[3].(map[string]any); res["role"] != "tool" || res["tool_call_id"] != "call_1" || !strings.Contains(fmt.Sprint(res["content"]), "Rex") {
		t.Errorf("tool result sent back: %v", res)
	}

	var spans []string
	for _, s := range rec.Ended() {
		attrs := map[string]string{}
		for _, kv := range s.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		spans = append(spans, fmt.Sprintf("%s %s round=%s provider=%s in=%s out=%s", s.Name(), s.SpanKind(),
			attrs["mcs.round"], attrs["gen_ai.provider.name"], attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"]))
	}
	wantSpans := []string{
		"chat gpt-test client round=1 provider=openai in=30 out=10",
		"chat gpt-test client round=2 provider=openai in=60 out=8",
	}
	if diff := cmp.Diff(wantSpans, spans); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

// TestChatConsentDenied: a "n" from the same input denies the call; the model
// gets the denial, nothing reaches the pet store, and the chat goes on.
func TestChatConsentDenied(t *testing.T) {
	f := newChatFixture(t, replay.SSE(t, "testdata/chat/find_sold.sse"), replay.SSE(t, "testdata/chat/answer_sold.sse"))
	r := mcsRun(t, "Which pets are sold?\nn\n", "chat", "--stack", f.stackFile,
		"--model", "gpt-test", "--base-url", f.llm.URL+"/v1", "--native")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "(always allow this tool): \n→ pets__findPetsByStatus {\"status\":\"sold\"}\n← ") {
		t.Errorf("the denied call is not shown:\n%s", r.stdout)
	}
	if q := f.queries(); len(q) != 0 {
		t.Errorf("a denied call reached the pet store: %v", q)
	}
	bodies := f.llm.Bodies(t)
	if len(bodies) != 2 {
		t.Fatalf("%d model requests, want 2 (the denial goes back to the model)", len(bodies))
	}
	msgs, _ := bodies[1]["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("second request has %d messages, want 4", len(msgs))
	}
	if res, _ := msgs[3].(map[string]any); res["tool_call_id"] != "call_1" || !strings.Contains(fmt.Sprint(res["content"]), "denied") {
		t.Errorf("the denial sent back: %v", res)
	}
}

// TestChatProblems: bad flags and an unreachable model, each one clear message.
func TestChatProblems(t *testing.T) {
	f := newChatFixture(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/v1"
	dead.Close()
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
		out   string // in stdout
		err   string // in stderr
	}{
		{name: "no model", args: []string{"--stack", f.stackFile}, code: exitUsage,
			err: "mcs: --model is required, such as --model gpt-4o-mini; see mcs chat --help"},
		{name: "unknown provider", args: []string{"--stack", f.stackFile, "--model", "m", "--provider", "gemini"}, code: exitUsage,
			err: `mcs: --provider "gemini": unknown provider; use openai`},
		{name: "anthropic without key", args: []string{"--stack", f.stackFile, "--model", "m", "--provider", "anthropic"}, code: exitFailed,
			err: "ANTHROPIC_API_KEY"},
		{name: "extra argument", args: []string{"--model", "m", "hello"}, code: exitUsage,
			err: "usage: mcs chat"},
		{name: "unreachable", stdin: "hello\n", args: []string{"--stack", f.stackFile, "--model", "m", "--base-url", deadURL}, code: exitOK,
			out: "The model could not be reached at " + deadURL + ". Start the server there, or point the chat elsewhere with --base-url URL or OPENAI_BASE_URL.\n> \n"},
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mcsRun(t, tt.stdin, append([]string{"chat"}, tt.args...)...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.out) || !strings.Contains(r.stderr, tt.err) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s\nwant stdout with %q, stderr with %q", r.code, tt.code, r.stdout, r.stderr, tt.out, tt.err)
			}
		})
	}
}

// TestChatBinary runs the built command: a question answered through a tool
// call with consent from the piped input, then Ctrl-C (SIGINT) while the chat
// waits for the next line ends it cleanly, with exit code 0.
func TestChatBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t)
	f := newChatFixture(t, chatReplies(t)...)
	cmd := exec.Command(bin, "chat", "--stack", f.stackFile, "--model", "gpt-test", "--base-url", f.llm.URL+"/v1", "--native")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	if _, err := io.WriteString(stdin, "Which pets are sold?\ny\n"); err != nil {
		t.Fatal(err)
	}
	// Read up to the prompt after the answer: the chat then waits for a line.
	var out strings.Builder
	buf := make([]byte, 1)
	for !strings.HasSuffix(out.String(), "Rex and Tom.\n> ") {
		if _, err := stdout.Read(buf); err != nil {
			t.Fatalf("stdout ended (%v) before the answer:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
		}
		out.Write(buf)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stdout)
	out.Write(rest)
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("after Ctrl-C: %v, want exit code %d\nstdout:\n%s\nstderr:\n%s", err, exitInterrupted, out.String(), errOut.String())
	}
	for _, want := range []string{"(always allow this tool): \n→ pets__findPetsByStatus {\"status\":\"sold\"}\n← 63 bytes\n", "Two pets are sold: Rex and Tom.\n> \n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if q := f.queries(); len(q) != 1 {
		t.Errorf("pet store queries %v", q)
	}
}

// TestChatProviders runs the same conversation through the text protocol (no
// --native) and through the Anthropic Messages API: the call line, the consent
// question on the same input and the answer, and the tool result sent back in
// each wire shape.
func TestChatProviders(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	tests := []struct {
		name    string
		replies []string
		args    func(url string) []string
		before  string // the streamed text before the call
		check   func(t *testing.T, paths []string, bodies []map[string]any)
	}{
		{
			name:    "openai text protocol",
			replies: []string{"find_sold_text.sse", "answer_sold.sse"},
			args:    func(url string) []string { return []string{"--base-url", url + "/v1"} },
			before:  "Let me look. ",
			check: func(t *testing.T, paths []string, bodies []map[string]any) {
				if _, ok := bodies[0]["tools"]; ok {
					t.Errorf("the text protocol sent native tools: %v", bodies[0]["tools"])
				}
				msgs, _ := bodies[1]["messages"].([]any)
				if len(msgs) < 4 || !strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), "Rex") {
					t.Errorf("the tool result is not the last message of the second request: %v", msgs)
				}
			},
		},
		{
			name:    "anthropic native",
			replies: []string{"find_sold_anthropic.sse", "answer_sold_anthropic.sse"},
			args: func(url string) []string {
				return []string{"--provider", "anthropic", "--base-url", url, "--native"}
			},
			before: "Let me look.",
			check: func(t *testing.T, paths []string, bodies []map[string]any) {
				if !cmp.Equal(paths, []string{"/v1/messages", "/v1/messages"}) {
					t.Errorf("paths %v", paths)
				}
				if tools, _ := bodies[0]["tools"].([]any); len(tools) != 1 {
					t.Errorf("first request has %d tools, want 1", len(tools))
				}
				msgs, _ := bodies[1]["messages"].([]any)
				if len(msgs) != 3 { // user, assistant with tool_use, user with tool_result
					t.Fatalf("second request has %d messages, want 3: %v", len(msgs), msgs)
				}
				if s := fmt.Sprint(msgs[2]); !strings.Contains(s, "tool_result") || !strings.Contains(s, "toolu_1") || !strings.Contains(s, "Rex") {
					t.Errorf("the tool result sent back: %s", s)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replies []replay.Reply
			for _, r := range tt.replies {
				replies = append(replies, replay.SSE(t, filepath.Join("testdata/chat", r)))
			}
			f := newChatFixture(t, replies...)
			args := append([]string{"chat", "--stack", f.stackFile, "--model", "m-test"}, tt.args(f.llm.URL)...)
			r := mcsRun(t, "Which pets are sold?\ny\n", args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			want := `mcs chat with m-test (commands: /tools lists the tools, /reset starts a new conversation, /quit (or Ctrl-D) ends the chat)
> ` + tt.before + `
Tool "pets__findPetsByStatus" (driver "pets", via the orchestrator) wants to run with these arguments:
{
  "status": "sold"
}
Allow it? y (yes), n (no), a (always allow this tool): 
→ pets__findPetsByStatus {"status":"sold"}
← 63 bytes
Two pets are sold: Rex and Tom.
> 
`
			if diff := cmp.Diff(want, r.stdout); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if q := f.queries(); !cmp.Equal(q, []string{"/pets/findByStatus?status=sold"}) {
				t.Errorf("pet store queries %v", q)
			}
			bodies := f.llm.Bodies(t)
			if len(bodies) != 2 {
				t.Fatalf("%d model requests, want 2", len(bodies))
			}
			tt.check(t, f.llm.Paths(), bodies)
		})
	}
}

// TestChatRoundSpansNest: with the tracing middleware on the driver, the
// execute_tool span of a call is a child of the "chat {model}" span of the round
// whose reply asked for it.
func TestChatRoundSpansNest(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	pets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, chatSold)
	}))
	t.Cleanup(pets.Close)
	d, err := rest.New(rest.Config{Spec: []byte(chatPetSpec), BaseURL: pets.URL},
		mcs.WithMiddleware(tracing.New()), mcs.WithNativeTools(func(string) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	llm := replay.New(t, replay.SSE(t, "../../internal/chat/testdata/find_sold.sse"), replay.SSE(t, "testdata/chat/answer_sold.sse"))
	model, err := openai.New(openai.Config{Model: "gpt-test", BaseURL: llm.URL + "/v1", APIKey: "sk-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err = chat.Run(context.Background(), chat.Config{Driver: d, Model: model, In: strings.NewReader("Which pets are sold?\n"),
		Out: &out, Native: true, RoundHooks: []runner.RoundHook{roundSpans("openai")}})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[trace.SpanID]string{}
	for _, s := range rec.Ended() {
		byID[s.SpanContext().SpanID()] = s.Name()
	}
	var tree []string
	for _, s := range rec.Ended() {
		tree = append(tree, s.Name()+" < "+byID[s.Parent().SpanID()])
	}
	sort.Strings(tree)
	want := []string{"chat gpt-test < ", "chat gpt-test < ", "execute_tool findPetsByStatus < chat gpt-test"}
	if diff := cmp.Diff(want, tree); diff != "" {
		t.Errorf("span tree, name < parent (-want +got):\n%s\noutput:\n%s", diff, out.String())
	}
}

// approveBetween is the chat's input: first, then, when the chat first reads
// after first (the first question's rounds are over), approve runs before the
// rest is read.
type approveBetween struct {
	first, rest *strings.Reader
	approve     func()
	once        sync.Once
}

func (r *approveBetween) Read(p []byte) (int, error) {
	if r.first.Len() > 0 {
		return r.first.Read(p)
	}
	r.once.Do(r.approve)
	return r.rest.Read(p)
}

// TestChatApprovals: with ask = "queue" the model's call waits and the round
// ends; a person approves it (through the store, as another process would)
// before the next line, and the chat runs it once, before the model's next
// request, which reads its result.
func TestChatApprovals(t *testing.T) {
	f := newChatFixture(t, append(chatReplies(t), replay.SSE(t, "testdata/chat/answer_sold.sse"))...)
	data, err := os.ReadFile(f.stackFile)
	if err != nil {
		t.Fatal(err)
	}
	queued := strings.Replace(string(data), "ask = true", "ask = \"queue\"\n[approvals]\nstore = \"sqlite:approvals.db\"", 1)
	if err := os.WriteFile(f.stackFile, []byte(queued), 0o600); err != nil {
		t.Fatal(err)
	}
	var approved []string
	in := &approveBetween{first: strings.NewReader("Which pets are sold?\n"), rest: strings.NewReader("And now?\n"), approve: func() {
		ctx := context.Background()
		store, err := approvals.Open(ctx, "sqlite:"+filepath.Join(filepath.Dir(f.stackFile), "approvals.db"))
		if err != nil {
			t.Error(err)
			return
		}
		defer store.Close()
		pending, err := store.List(ctx, approvals.Filter{State: approvals.Pending})
		if err != nil {
			t.Error(err)
		}
		for _, r := range pending {
			if _, err := store.Decide(ctx, r.ID, approvals.Decision{Approve: true, By: "test"}); err != nil {
				t.Error(err)
			}
			approved = append(approved, r.ID)
		}
	}}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"chat", "--stack", f.stackFile, "--model", "gpt-test", "--base-url", f.llm.URL + "/v1", "--native"}, in, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if len(approved) != 1 {
		t.Fatalf("approved %v between the questions; want one pending request\nstdout:\n%s", approved, out.String())
	}
	if q := f.queries(); !cmp.Equal(q, []string{"/pets/findByStatus?status=sold"}) {
		t.Errorf("pet store queries %v; want the approved call once", q)
	}
	bodies := f.llm.Bodies(t)
	if len(bodies) != 3 {
		t.Fatalf("%d model requests, want 3", len(bodies))
	}
	msgs, _ := bodies[1]["messages"].([]any)
	if res, _ := msgs[len(msgs)-1].(map[string]any); !strings.Contains(fmt.Sprint(res["content"]), `"approval_pending":true`) {
		t.Errorf("the first question's tool result: %v; want the pending signal", res)
	}
	msgs, _ = bodies[2]["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if text := fmt.Sprint(last["content"]); last["role"] != "user" ||
		!strings.Contains(text, "The approved call to 'pets__findPetsByStatus' (approval "+approved[0]+") ran.") ||
		!strings.Contains(text, "Rex") || !strings.Contains(text, "And now?") {
		t.Errorf("the second question's last message: %v; want the approved call's result, then the question", last)
	}
}

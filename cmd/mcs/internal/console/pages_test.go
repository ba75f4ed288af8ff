package console

import (
	"context"
	"golang.org/x/net/html"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/openai"
	"github.com/mcs-go/mcs/stack"
)

// scripted is a model that answers with its replies in turn, as Chat
// Completions assistant messages.
type scripted struct {
	mu      sync.Mutex
	replies []string
}

func (*scripted) Name() string { return "scripted" }

func (m *scripted) Generate(context.Context, runner.Request) (runner.Reply, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.replies[0]
	if len(m.replies) > 1 {
		m.replies = m.replies[1:]
	}
	return runner.Reply{Message: map[string]any{"role": "assistant", "content": r}}, nil
}

func (m *scripted) Stream(ctx context.Context, req runner.Request, _ func(any)) (runner.Reply, error) {
	return m.Generate(ctx, req)
}

// The chat asks the model through the runner; its calls run through the
// stack and are listed with their outcome; a model that cannot be reached is
// reported with the endpoint.
func TestChat(t *testing.T) {
	f := &fakeTools{}
	model := &scripted{replies: []string{`{"tool": "secret", "arguments": {"api_key": "k-0123456789ab"}}`, "The answer is <b>42</b>."}}
	tc := newTestConsole(t, nil, mcs.NewBaseDriver(f), nil, Config{Model: model})
	_, out := tc.post("/api/chat", map[string]any{"message": "what is it?"}, nil)
	if out["text"] != "The answer is <b>42</b>." || out["error"] != nil {
		t.Fatalf("chat: %v", out)
	}
	callList, _ := out["calls"].([]any)
	if len(callList) != 1 || !strings.Contains(callList[0].(map[string]any)["arguments"].(string), "[REDACTED]") {
		t.Errorf("calls %v; want the secret call, its key redacted", callList)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	m, err := openai.New(openai.Config{Model: "m", BaseURL: down})
	if err != nil {
		t.Fatal(err)
	}
	tc = newTestConsole(t, nil, mcs.NewBaseDriver(f), nil, Config{Model: m, ModelHint: "--base-url URL"})
	_, out = tc.post("/api/chat", map[string]any{"message": "hello"}, nil)
	if e, _ := out["error"].(string); !strings.Contains(e, "could not be reached at "+down) || !strings.Contains(e, "--base-url URL") {
		t.Errorf("chat with the model down: %v", out)
	}

	tc = newTestConsole(t, nil, mcs.NewBaseDriver(f), nil, Config{})
	if _, doc := tc.get("/chat"); !strings.Contains(text(doc), "No model is configured") {
		t.Error("the chat page without a model does not say how to configure one")
	}
}

// challenger's tool needs a sign-in.
type challenger struct{ fakeTools }

func (*challenger) ExecuteTool(context.Context, string, map[string]any) (any, error) {
	return (&auth.Challenge{Message: "Sign in to GitHub", URL: "https://github.com/login/device", Code: "WDJB-MJHT", Scope: "gh"}).Result(), nil
}

// The Auth page shows the sign-in a call met and each credential's status,
// never the credential.
func TestAuthPage(t *testing.T) {
	t.Setenv("MCS_TOKEN_PETS", "tok-very-secret-value")
	st, err := stack.Parse("s.toml", []byte("[[driver]]\nlabel = \"pets\"\ntype = \"rest\"\nspec = \"https://example.com/openapi.json\"\ncredentials = \"env\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	tc := newTestConsole(t, st, mcs.NewBaseDriver(&challenger{}), nil, Config{})
	_, out := tc.post("/api/run", map[string]any{"tool": "echo", "fields": map[string]string{}}, nil)
	if out["kind"] != "challenge" {
		t.Fatalf("run: %v; want a challenge", out)
	}
	_, doc := tc.get("/auth")
	page := text(doc)
	for _, want := range []string{"Sign in to GitHub", "WDJB-MJHT", "pets", "env MCS_TOKEN_PETS", "set"} {
		if !strings.Contains(page, want) {
			t.Errorf("the Auth page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "tok-very-secret-value") {
		t.Fatal("the Auth page shows the token")
	}
	var link string
	walk(doc, func(n *html.Node) {
		if href, ok := attr(n, "href"); ok && n.Data == "a" && strings.Contains(href, "github") {
			link = href
		}
	})
	if link != "https://github.com/login/device" {
		t.Errorf("the sign-in link is %q", link)
	}
}

// Process lists the calls found, owned or not, and the Response.
func TestProcess(t *testing.T) {
	tc, f := fakeConsole(t)
	_, out := tc.post("/api/process", map[string]any{"reply": `{"tool": "echo", "arguments": {"text": "<script>x</script>"}} {"tool": "nope", "arguments": {}}`}, nil)
	rows, _ := out["calls"].([]any)
	if len(rows) != 2 {
		t.Fatalf("calls %v; want echo and nope", out)
	}
	r0, r1 := rows[0].(map[string]any), rows[1].(map[string]any)
	if r0["name"] != "echo" || r0["owned"] != true || r0["outcome"] != "ok" || r1["name"] != "nope" || r1["owned"] != false {
		t.Errorf("calls %v", rows)
	}
	if resp, _ := out["response"].(string); !strings.Contains(resp, `"call_executed": true`) || !strings.Contains(resp, "<script>x</script>") {
		t.Errorf("response %q", resp)
	}
	if f.calls.Load() != 1 {
		t.Errorf("the tool ran %d times, want 1", f.calls.Load())
	}
}

// The Prompt page measures the prompt as mcs tools --budget does.
func TestPromptPage(t *testing.T) {
	tc, _ := fakeConsole(t)
	_, doc := tc.get("/prompt?model=gpt-4o")
	page := text(doc)
	if strings.Contains(page, "REDACTED") || !strings.Contains(page, `"api_key":{"type":"string"}`) {
		t.Errorf("the native tools redact the schema of the parameter api_key:\n%s", page)
	}
	for _, want := range []string{"Tools3", "Text mode: system message", "echo", "Within the limits"} {
		if !strings.Contains(strings.ReplaceAll(page, "\n", ""), want) {
			t.Errorf("the Prompt page lacks %q", want)
		}
	}
}

// A call of the chat that the stack asks about waits in the browser, as a
// Run's does; allowed, it runs and the model answers.
func TestChatConsent(t *testing.T) {
	f := &fakeTools{}
	var srv *Server
	consent := func(ctx context.Context, name string, args map[string]any) (bool, error) {
		return srv.Consent(ctx, name, args)
	}
	model := &scripted{replies: []string{`{"tool": "echo", "arguments": {"text": "hi"}}`, "done"}}
	tc := newTestConsole(t, nil, mcs.NewBaseDriver(f, mcs.WithMiddleware(permission.New(consent))), nil, Config{Model: model})
	srv = tc.srv
	events, _ := srv.hub.subscribe(1 << 62)
	done := make(chan map[string]any, 1)
	go func() {
		_, out := tc.post("/api/chat", map[string]any{"message": "echo hi"}, nil)
		done <- out
	}()
	var id any
	for id == nil {
		if ev := <-events; ev.name == "approvals" {
			if _, view := tc.getJSON("/api/approvals"); len(view["consent"].([]any)) == 1 {
				id = view["consent"].([]any)[0].(map[string]any)["id"]
			}
		}
	}
	srv.hub.unsubscribe(events)
	tc.post("/api/consent", map[string]any{"id": id, "approve": true}, nil)
	out := <-done
	if out["text"] != "done" || f.calls.Load() != 1 {
		t.Fatalf("chat %v, %d calls; want done after one call", out, f.calls.Load())
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcs-go/mcs/internal/replay"
)

// completion is a Chat Completions answer holding content.
func completion(content string) replay.Reply {
	return replay.JSON(200, `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"gpt-test",`+
		`"choices":[{"index":0,"message":{"role":"assistant","content":`+jsonString(content)+`},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":30,"completion_tokens":10,"total_tokens":40}}`)
}

func jsonString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// TestUIChatInBrowser chats on the Chat page with a replaying model: the model
// calls a tool, the stack asks, the question waits in the page's banner, is
// allowed there, and the model's answer follows.
func TestUIChatInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts chromium")
	}
	f := newChatFixture(t,
		completion(`Let me look. {"tool": "pets__findPetsByStatus", "arguments": {"status": "sold"}}`),
		completion("Two pets are sold: Rex and Tom."))
	ctx := browser(t)
	t.Chdir(filepath.Dir(f.stackFile)) // the header shows the stack file as given
	url, _, stderr := startUIHere(t, "--stack", filepath.Base(f.stackFile), "--model", "gpt-test", "--base-url", f.llm.URL+"/v1")
	base := url[:strings.Index(url, "/?")]
	if err := within(ctx,
		chromedp.Navigate(url),
		chromedp.Navigate(base+"/chat"),
		chromedp.SetValue(chromedp.CSS(`#chat textarea[name="message"]`), "Which pets are sold?"),
		chromedp.Click(chromedp.CSS(`#chat button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#consent .question button.approve")),
	); err != nil {
		t.Fatalf("ask: %v\n%s", err, stderr.String())
	}
	if got := eval[string](t, ctx, `document.querySelector("#consent .question").textContent`); !strings.Contains(got, "pets__findPetsByStatus") || !strings.Contains(got, "sold") {
		t.Errorf("the question says %q", got)
	}
	eval[bool](t, ctx, `(() => { document.querySelector("#consent .question button.approve").click(); return true })()`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector(".chat-log .model") !== null`, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Fatalf("no answer: %v\n%s", err, stderr.String())
	}
	log := eval[string](t, ctx, `document.querySelector(".chat-log").innerText`)
	for _, want := range []string{"Which pets are sold?", `→ pets__findPetsByStatus {"status":"sold"}`, "← ok", "Two pets are sold: Rex and Tom."} {
		if !strings.Contains(log, want) {
			t.Errorf("the chat %q lacks %q", log, want)
		}
	}
	if q := f.queries(); len(q) != 1 {
		t.Errorf("the pet store got %v, want one query", q)
	}
	shot(t, ctx, "chat")
}

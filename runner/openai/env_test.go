package openai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcs-go/mcs/internal/replay"
	"github.com/mcs-go/mcs/runner"
)

// TestEnvironmentDefaults: the model is built on the Chat Completions service alone
// (the whole client links every API of the provider), so the SDK's environment
// defaults must still reach the request: organisation and project.
func TestEnvironmentDefaults(t *testing.T) {
	t.Setenv("OPENAI_ORG_ID", "org-test")
	t.Setenv("OPENAI_PROJECT_ID", "proj-test")
	headers := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case headers <- r.Header.Clone():
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}`))
	}))
	defer srv.Close()
	w := &replay.Weather{}
	res, err := runner.New(w.Driver(), newModel(t, srv.URL)).Run(context.Background(), nil, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hi" {
		t.Errorf("Text = %q", res.Text)
	}
	h := <-headers
	if got := h.Get("OpenAI-Organization"); got != "org-test" {
		t.Errorf("OpenAI-Organization = %q, want org-test", got)
	}
	if got := h.Get("OpenAI-Project"); got != "proj-test" {
		t.Errorf("OpenAI-Project = %q, want proj-test", got)
	}
	if got := h.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
}

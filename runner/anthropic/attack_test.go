package anthropic_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/anthropic"
	"github.com/mcs-go/mcs/runner/internal/adaptertest"
)

// A configured endpoint that redirects to another port on the same host, or from
// https to http, must not make the client send the key there.
func TestAttackRedirectTakesTheKeyElsewhere(t *testing.T) {
	adaptertest.RedirectTakesTheKeyElsewhere(t, "ANTHROPIC_BASE_URL", func(baseURL string, client *http.Client) (runner.Model, error) {
		return anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: baseURL, APIKey: "sk-ant-secret", HTTPClient: client, MaxRetries: 1})
	})
}

// A redirect within the configured origin is followed.
func TestRedirectWithinTheOriginIsFollowed(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/old/v1/messages", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v1/messages", http.StatusPermanentRedirect)
	})
	mux.HandleFunc("/v1/messages", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key")+r.Header.Get("Authorization") == "" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"m","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"moved"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	m, err := anthropic.New(anthropic.Config{Model: "claude-test", BaseURL: srv.URL + "/old", APIKey: "sk-ant-secret", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := m.Generate(context.Background(), runner.Request{Messages: []map[string]any{{"role": "user", "content": "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := reply.Message["content"].([]any); len(c) != 1 {
		t.Errorf("reply %v", reply.Message)
	}
}

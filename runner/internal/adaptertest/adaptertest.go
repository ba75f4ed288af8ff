// Package adaptertest holds the tests every provider adapter of the runner
// (runner/openai, runner/anthropic) must pass, written once.
package adaptertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcs-go/mcs/runner"
)

// catcher is a server that records the key of every request it receives.
type catcher struct {
	mu   sync.Mutex
	keys []string
}

func (c *catcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.keys = append(c.keys, r.Header.Get("X-Api-Key")+r.Header.Get("Authorization"))
	c.mu.Unlock()
	http.Error(w, "caught", http.StatusTeapot)
}

func (c *catcher) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

// RedirectTakesTheKeyElsewhere is the attack test of a provider adapter: a
// configured endpoint that redirects to another port on the same host, or from
// https to http, must not make the client send the key there; the refusal is a
// *runner.ModelError wrapping runner.ErrRedirectRefused that names the target and,
// in its hint, envVar; it is not retried. newModel builds the adapter on baseURL
// (the test server's URL) with client and one retry.
func RedirectTakesTheKeyElsewhere(t *testing.T, envVar string, newModel func(baseURL string, client *http.Client) (runner.Model, error)) {
	t.Helper()
	thief := &catcher{}
	other := httptest.NewServer(thief) // same host (127.0.0.1), another port, plain http
	defer other.Close()
	var attempts atomic.Int32
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
	}{
		{"other port", httptest.NewServer(redirect)},
		{"https to http", httptest.NewTLSServer(redirect)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.srv.Close()
			attempts.Store(0)
			m, err := newModel(tc.srv.URL, tc.srv.Client())
			if err != nil {
				t.Fatal(err)
			}
			for _, stream := range []bool{false, true} {
				req := runner.Request{Messages: []map[string]any{{"role": "user", "content": "hi"}}}
				if stream {
					_, err = m.Stream(context.Background(), req, nil)
				} else {
					_, err = m.Generate(context.Background(), req)
				}
				var me *runner.ModelError
				if !errors.As(err, &me) || !errors.Is(err, runner.ErrRedirectRefused) {
					t.Fatalf("stream=%v: err = %v, want a *ModelError wrapping ErrRedirectRefused", stream, err)
				}
				if !strings.Contains(err.Error(), other.URL) || !strings.Contains(me.Hint, envVar) {
					t.Errorf("stream=%v: the error names neither the target nor the fix: %v", stream, err)
				}
			}
			if n := attempts.Load(); n != 2 {
				t.Errorf("%d requests reached the endpoint, want 2: a refused redirect is not retried", n)
			}
			if keys := thief.got(); len(keys) > 0 {
				t.Errorf("the other origin received %d requests with the keys %q", len(keys), keys)
			}
		})
	}
}

// Package oauthtest is a real OAuth 2.0 authorization server for tests, on
// httptest: an authorization endpoint that redirects to the client's redirect
// URI with a code and the state (or an error), and a token endpoint that
// accepts only form-encoded requests, checks the PKCE verifier against the
// challenge (S256), and issues one-time refresh tokens, counting the refreshes.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Server is the authorization server. Its exported fields may be changed
// between requests (under the test's own ordering); the counters are atomic.
type Server struct {
	*httptest.Server
	ClientID string
	// ExpiresIn is the lifetime of the access tokens issued, in seconds.
	ExpiresIn int
	// Deny makes the authorization endpoint redirect with error=access_denied.
	Deny atomic.Bool
	// TokenMode, when set, makes the token endpoint misbehave: "html" answers an
	// HTML page with status 200, "500" an HTML error page with status 500.
	TokenMode atomic.Value // string
	// Refreshes counts the refresh grants answered with a token.
	Refreshes atomic.Int64
	// Exchanges counts the authorization codes exchanged.
	Exchanges atomic.Int64

	mu       sync.Mutex
	codes    map[string]grant  // code -> grant
	refresh  map[string]string // live refresh token -> scope
	access   map[string]bool   // live access tokens
	Failures []string          // what the token endpoint refused and why
}

type grant struct {
	challenge, redirect, scope, resource string
}

// New starts a server and closes it when t ends.
func New(t testing.TB) *Server {
	s := &Server{ClientID: "mcs-test-client", ExpiresIn: 3600,
		codes: map[string]grant{}, refresh: map[string]string{}, access: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": s.URL, "authorization_endpoint": s.AuthURL(), "token_endpoint": s.TokenURL(),
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// AuthURL and TokenURL are the endpoints.
func (s *Server) AuthURL() string  { return s.URL + "/authorize" }
func (s *Server) TokenURL() string { return s.URL + "/token" }

// Valid reports whether tok is a live access token the server issued.
func (s *Server) Valid(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access[tok]
}

// IssueRefresh makes a live refresh token for scope, as if a sign-in had
// happened, and returns it.
func (s *Server) IssueRefresh(scope string) string {
	rt := "rt-" + rand.Text()
	s.mu.Lock()
	s.refresh[rt] = scope
	s.mu.Unlock()
	return rt
}

func (s *Server) fail(w http.ResponseWriter, status int, code, why string) {
	s.mu.Lock()
	s.Failures = append(s.Failures, code+": "+why)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": why})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme != "http" || !strings.HasPrefix(redirect.Host, "127.0.0.1:") {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	rq := url.Values{"state": {q.Get("state")}}
	switch {
	case s.Deny.Load():
		rq.Set("error", "access_denied")
		rq.Set("error_description", "the user said no")
	case q.Get("client_id") != s.ClientID || q.Get("response_type") != "code" ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		rq.Set("error", "invalid_request")
	default:
		code := "code-" + rand.Text()
		s.mu.Lock()
		s.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), scope: q.Get("scope"), resource: q.Get("resource")}
		s.mu.Unlock()
		rq.Set("code", code)
	}
	redirect.RawQuery = rq.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	switch m, _ := s.TokenMode.Load().(string); m {
	case "html":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>Sign in to continue</body></html>")
		return
	case "500":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "<html><body>Internal error</body></html>")
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); r.Method != http.MethodPost || ct != "application/x-www-form-urlencoded" {
		s.fail(w, http.StatusBadRequest, "invalid_request", "want a form-encoded POST, got "+r.Method+" "+ct)
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request", "form: "+err.Error())
		return
	}
	if r.PostForm.Get("client_id") != s.ClientID {
		s.fail(w, http.StatusUnauthorized, "invalid_client", "unknown client")
		return
	}
	var scope string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		s.mu.Lock()
		g, ok := s.codes[code]
		delete(s.codes, code) // one use
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case !ok:
			s.fail(w, http.StatusBadRequest, "invalid_grant", "unknown or used code")
			return
		case g.redirect != r.PostForm.Get("redirect_uri"):
			s.fail(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			s.fail(w, http.StatusBadRequest, "invalid_grant", "the code verifier does not match the challenge")
			return
		case g.resource != r.PostForm.Get("resource"):
			s.fail(w, http.StatusBadRequest, "invalid_target", "resource differs")
			return
		}
		scope = g.scope
		s.Exchanges.Add(1)
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		s.mu.Lock()
		sc, ok := s.refresh[rt]
		delete(s.refresh, rt) // one-time refresh tokens
		s.mu.Unlock()
		if !ok {
			s.fail(w, http.StatusBadRequest, "invalid_grant", "unknown or used refresh token")
			return
		}
		scope = sc
		s.Refreshes.Add(1)
	default:
		s.fail(w, http.StatusBadRequest, "unsupported_grant_type", r.PostForm.Get("grant_type"))
		return
	}
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	s.mu.Lock()
	s.access[at] = true
	s.refresh[rt] = scope
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": s.ExpiresIn, "scope": scope,
	})
}

// Browser is a scripted browser: an HTTP client that follows the
// authorization URL through the redirect to the loopback listener, and returns
// the listener's final status and page.
func Browser(t testing.TB, authURL string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

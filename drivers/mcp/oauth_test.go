package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// oauthServer is a go-sdk MCP server behind the SDK's bearer-token middleware,
// which answers 401 with its protected-resource metadata; the tokens are those
// of the authorization server as.
func oauthServer(t *testing.T, as *oauthtest.Server) (mcpURL string, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var tokens []string
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	verify := func(_ context.Context, tok string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		mu.Lock()
		tokens = append(tokens, tok)
		mu.Unlock()
		if !as.Valid(tok) {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	srv := newTestServer(0)
	mcpHandler := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil)
	mux.Handle("/mcp", sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{
		ResourceMetadataURL: ts.URL + "/.well-known/oauth-protected-resource/mcp",
		Scopes:              []string{"tools"},
	})(mcpHandler))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             ts.URL + "/mcp",
		AuthorizationServers: []string{as.URL},
		ScopesSupported:      []string{"tools"},
	}))
	t.Cleanup(func() {
		for ss := range srv.Sessions() {
			_ = ss.Close()
		}
	})
	return ts.URL + "/mcp", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), tokens...)
	}
}

func TestOAuthServer(t *testing.T) {
	as := oauthtest.New(t)
	mcpURL, seen := oauthServer(t, as)
	store := auth.NewMemoryStore()
	h, err := NewOAuthHandler(mcpURL, OAuthConfig{ClientID: as.ClientID, Scope: "remote", Store: store, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	cfg := Config{URL: mcpURL, OAuth: h, Logger: discardLogger()}

	// Not signed in: the connection fails with the sign-in's challenge.
	_, err = NewToolDriver(testCtx(t), cfg)
	ch, ok := errors.AsType[*auth.Challenge](err)
	if !ok {
		t.Fatalf("NewToolDriver without a token = %v; want a *auth.Challenge", err)
	}
	if ch.Scope != "remote" || !strings.HasPrefix(ch.URL, as.AuthURL()+"?") || !strings.Contains(ch.URL, "resource=") {
		t.Errorf("challenge %+v", ch)
	}

	// The user signs in; the next connection sends the token.
	oauthtest.Browser(t, ch.URL)
	if err := h.Wait(testCtx(t), "remote"); err != nil {
		t.Fatal(err)
	}
	d, err := New(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("New after the sign-in: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	got, err := d.ExecuteTool(testCtx(t), "echo", map[string]any{"message": "signed in"})
	if err != nil || got != "signed in" {
		t.Fatalf("echo = %v, %v", got, err)
	}
	tokens := seen()
	if len(tokens) == 0 || !as.Valid(tokens[len(tokens)-1]) {
		t.Errorf("the server saw no valid token: %v", tokens)
	}
	st, err := h.Status(testCtx(t), "remote")
	if err != nil || !st.SignedIn || strings.Join(st.Scopes, " ") != "tools" {
		t.Errorf("Status = %+v, %v", st, err)
	}

	// A second process sharing the store (a new handler) finds the token
	// without a sign-in.
	h2, _ := NewOAuthHandler(mcpURL, OAuthConfig{ClientID: as.ClientID, Scope: "remote", Store: store, Logger: discardLogger()})
	t.Cleanup(func() { h2.Close() })
	d2, err := NewToolDriver(testCtx(t), Config{URL: mcpURL, OAuth: h2, Logger: discardLogger()})
	if err != nil {
		t.Fatalf("a second handler on the same store: %v", err)
	}
	d2.Close()
	if n := as.Exchanges.Load(); n != 1 {
		t.Errorf("%d sign-ins, want 1", n)
	}
}

func TestOAuthServerWithoutMetadata(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="x"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(ts.Close)
	h, err := NewOAuthHandler(ts.URL+"/mcp", OAuthConfig{ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewToolDriver(testCtx(t), Config{URL: ts.URL + "/mcp", OAuth: h, Logger: discardLogger()})
	if err == nil || !strings.Contains(err.Error(), "protected-resource metadata") {
		t.Errorf("a server without metadata: %v", err)
	}
	if _, err := NewOAuthHandler("ftp://x", OAuthConfig{ClientID: "c"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ftp URL: %v", err)
	}
}

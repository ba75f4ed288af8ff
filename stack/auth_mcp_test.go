package stack

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// An MCP server that requires OAuth: the build fails with the sign-in's
// challenge and how to sign in ahead of time; once signed in through the
// stack's provider (as mcs auth login does), the build connects.
func TestMCPOAuthCredentials(t *testing.T) {
	as := oauthtest.New(t)
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	type in struct {
		Name string `json:"name"`
	}
	mcpsdk.AddTool(srv, &mcpsdk.Tool{Name: "hello", Description: "Says hello."}, func(_ context.Context, _ *mcpsdk.CallToolRequest, a in) (*mcpsdk.CallToolResult, any, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "hello " + a.Name}}}, nil, nil
	})
	verify := func(_ context.Context, tok string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		if !as.Valid(tok) {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux.Handle("/mcp", sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{ResourceMetadataURL: ts.URL + "/.well-known/oauth-protected-resource/mcp"})(
		mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil)))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: ts.URL + "/mcp", AuthorizationServers: []string{as.URL}, ScopesSupported: []string{"tools"}}))
	defer func() {
		for ss := range srv.Sessions() {
			ss.Close()
		}
	}()

	dir := t.TempDir()
	s, err := Parse(filepath.Join(dir, "mcs.toml"), []byte(`[[driver]]
label = "remote"
type = "mcp"
url = "`+ts.URL+`/mcp"
credentials = "oauth"
[driver.oauth]
client_id = "`+as.ClientID+`"

[middleware]
order = ["auth"]
`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.SignIns(); len(got) != 1 || got[0].Label != "remote" || got[0].Mode != "oauth" || got[0].Store != "sqlite:"+filepath.Join(dir, DefaultTokenFile) {
		t.Errorf("SignIns = %+v", got)
	}
	ctx := context.Background()
	_, err = s.Build(ctx)
	if _, ok := errors.AsType[*auth.Challenge](err); !ok || !strings.Contains(err.Error(), "mcs auth login remote") {
		t.Fatalf("Build before the sign-in = %v; want the challenge and the hint", err)
	}
	p, err := s.CredentialProvider(ctx, "remote")
	if err != nil {
		t.Fatal(err)
	}
	err = auth.SignIn(ctx, p, "remote", func(ch *auth.Challenge) {
		go func() { // a browser: follows the link to the redirect
			if resp, err := http.Get(ch.URL); err == nil {
				resp.Body.Close()
			}
		}()
	})
	if err != nil {
		t.Fatalf("SignIn: %v", err)
	}
	d, err := s.Build(ctx)
	if err != nil {
		t.Fatalf("Build after the sign-in: %v", err)
	}
	res, err := d.(mcs.ToolDriver).ExecuteTool(ctx, "hello", map[string]any{"name": "mcs"})
	if err != nil || mcs.ResultText(res) != "hello mcs" {
		t.Errorf("hello = %v, %v", res, err)
	}
}

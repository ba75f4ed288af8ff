package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// exampleTB lets an Example use the test helpers outside a test.
type exampleTB struct{ testing.TB }

func (exampleTB) Helper()               {}
func (exampleTB) Cleanup(func())        {}
func (exampleTB) Fatalf(string, ...any) { panic("example failed") }

// An MCP server behind the go-sdk's bearer-token middleware: the first
// connection fails with the sign-in link; once the user has signed in (a
// scripted browser here), the driver connects with the token.
func ExampleNewOAuthHandler() {
	as := oauthtest.New(exampleTB{})
	defer as.Close()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	verify := func(_ context.Context, tok string, _ *http.Request) (*sdkauth.TokenInfo, error) {
		if !as.Valid(tok) {
			return nil, sdkauth.ErrInvalidToken
		}
		return &sdkauth.TokenInfo{Expiration: time.Now().Add(time.Hour)}, nil
	}
	server := notesServer()
	mux.Handle("/mcp", sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{
		ResourceMetadataURL: ts.URL + "/.well-known/oauth-protected-resource/mcp"})(
		mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return server }, nil)))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", sdkauth.ProtectedResourceMetadataHandler(
		&oauthex.ProtectedResourceMetadata{Resource: ts.URL + "/mcp", AuthorizationServers: []string{as.URL}}))

	h, err := mcp.NewOAuthHandler(ts.URL+"/mcp", mcp.OAuthConfig{
		ClientID: as.ClientID,
		Scope:    "notes",
		Store:    auth.NewMemoryStore(), // or auth.OpenStore(ctx, "sqlite:tokens.db")
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	cfg := mcp.Config{URL: ts.URL + "/mcp", OAuth: h, Logger: slog.New(slog.DiscardHandler)}
	ctx := context.Background()

	_, err = mcp.NewToolDriver(ctx, cfg)
	var ch *auth.Challenge
	fmt.Println("challenge:", errors.As(err, &ch))

	resp, err := http.Get(ch.URL) // the user signs in
	if err == nil {
		resp.Body.Close()
	}
	if err := h.Wait(ctx, "notes"); err != nil {
		fmt.Println(err)
		return
	}
	d, err := mcp.NewToolDriver(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	res, err := d.ExecuteTool(ctx, "add_note", map[string]any{"text": "signed in"})
	fmt.Println(res, err)
	// Output:
	// challenge: true
	// added: signed in <nil>
}

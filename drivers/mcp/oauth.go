package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/middleware/auth"
)

// OAuthConfig configures the sign-in to a streamable HTTP server that requires
// OAuth (the MCP authorization specification): see [NewOAuthHandler].
type OAuthConfig struct {
	// ClientID is the client registered with the server's authorization server.
	ClientID string
	// Scopes are the OAuth scopes requested; nil means those the server's 401
	// challenge names, else those its protected-resource metadata lists.
	Scopes []string
	// Scope is the MCS scope of the sign-in: the key of its token in the store
	// and the scope of its challenge; "" means the server URL's host.
	Scope string
	// Store keeps the tokens; nil means a new auth.MemoryStore. Stores opened by
	// auth.OpenStore are shared by processes and machines.
	Store auth.TokenStore
	// Listen and Timeout are those of auth.AuthCodeConfig: the loopback
	// listener of the redirect ("127.0.0.1:0") and how long a sign-in may take.
	Listen  string
	Timeout time.Duration
	// HTTPClient fetches the metadata and sends the token requests; nil means
	// http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives the sign-in's records; nil means slog.Default().
	Logger *slog.Logger
}

// OAuthHandler signs in to an MCP server that answers 401 with protected
// resource metadata (RFC 9728), with the go-sdk's discovery (the server's
// WWW-Authenticate challenge, its protected-resource metadata, the
// authorization server's metadata) and the authorization code flow with PKCE
// of an [auth.AuthCodeProvider] on the configured store. The first request
// without a token is answered 401; the handler discovers the endpoints, and
// when the store holds a token (signed in earlier, by this or another process)
// the request is sent again with it; otherwise the connection fails with the
// provider's *auth.Challenge, whose link the user opens, and the next
// connection finds the token. The resource indicator (RFC 8707) is the one the
// metadata names.
//
// It implements the go-sdk's auth.OAuthHandler (set it as [Config.OAuth]) and
// [auth.CredentialProvider] (so that a program signs in ahead of time with
// auth.SignIn, for the scope [OAuthHandler.Scope]). Safe for concurrent use.
type OAuthHandler struct {
	cfg    OAuthConfig
	server string
	client *http.Client
	scope  string

	mu   sync.Mutex
	prov *auth.AuthCodeProvider
}

var (
	_ sdkauth.OAuthHandler    = (*OAuthHandler)(nil)
	_ auth.CredentialProvider = (*OAuthHandler)(nil)
)

// NewOAuthHandler returns the handler of the server at serverURL (the
// streamable HTTP endpoint). Nothing is contacted yet. It fails when the client
// ID is empty or the URL is not http(s).
func NewOAuthHandler(serverURL string, cfg OAuthConfig) (*OAuthHandler, error) {
	u, err := url.Parse(serverURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: OAuth: the server URL is not an http(s) URL", ErrInvalidConfig)
	}
	if cfg.ClientID == "" {
		return nil, fmt.Errorf("%w: OAuth: ClientID is empty; set it to the client registered with the server's authorization server", ErrInvalidConfig)
	}
	h := &OAuthHandler{cfg: cfg, server: serverURL, client: cfg.HTTPClient, scope: cfg.Scope}
	if h.client == nil {
		h.client = http.DefaultClient
	}
	if h.scope == "" {
		h.scope = u.Hostname()
	}
	if h.cfg.Store == nil {
		h.cfg.Store = auth.NewMemoryStore()
	}
	return h, nil
}

// Scope returns the MCS scope of the sign-in.
func (h *OAuthHandler) Scope() string { return h.scope }

// TokenSource returns the source of the tokens sent to the server: nil until
// the endpoints are discovered (the first request then goes without a token and
// its 401 starts the discovery).
func (h *OAuthHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	p := h.prov
	h.mu.Unlock()
	if p == nil {
		return nil, nil
	}
	return tokenSource{ctx: ctx, p: p, scope: h.scope}, nil
}

type tokenSource struct {
	ctx   context.Context
	p     *auth.AuthCodeProvider
	scope string
}

func (ts tokenSource) Token() (*oauth2.Token, error) {
	tok, err := ts.p.Token(ts.ctx, ts.scope)
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: tok, TokenType: "Bearer"}, nil
}

// Authorize answers a 401 (or 403) of the server: it discovers the endpoints
// when not done yet, drops a token the server refused, and returns nil when
// the store holds a token to send again, or the *auth.Challenge of a new
// sign-in. A 403 that asks for no other scope is left to the caller.
func (h *OAuthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if resp.StatusCode == http.StatusForbidden && bearerParam(challenges, "error") != "insufficient_scope" {
		return nil
	}
	p, err := h.provider(ctx, challenges)
	if err != nil {
		return err
	}
	if req != nil && strings.HasPrefix(req.Header.Get("Authorization"), "Bearer ") {
		// The server refused the token it was sent: it is of no use any more.
		if err := p.Forget(ctx, h.scope); err != nil {
			return err
		}
	}
	_, err = p.Token(ctx, h.scope)
	return err
}

// Token returns an access token for the server, or the *auth.Challenge of a
// sign-in; scope must be [OAuthHandler.Scope]. The first call discovers the
// endpoints, asking the server for its challenge.
func (h *OAuthHandler) Token(ctx context.Context, scope string) (string, error) {
	p, err := h.discovered(ctx, scope)
	if err != nil {
		return "", err
	}
	return p.Token(ctx, scope)
}

// Wait waits for the pending sign-in (see auth.AuthCodeProvider.Wait).
func (h *OAuthHandler) Wait(ctx context.Context, scope string) error {
	p, err := h.discovered(ctx, scope)
	if err != nil {
		return err
	}
	return p.Wait(ctx, scope)
}

// Status reports what the store holds, without any secret.
func (h *OAuthHandler) Status(ctx context.Context, scope string) (auth.TokenStatus, error) {
	p, err := h.discovered(ctx, scope)
	if err != nil {
		return auth.TokenStatus{Scope: scope}, err
	}
	return p.Status(ctx, scope)
}

// Forget removes the token from the store (sign out).
func (h *OAuthHandler) Forget(ctx context.Context, scope string) error {
	p, err := h.discovered(ctx, scope)
	if err != nil {
		return err
	}
	return p.Forget(ctx, scope)
}

// Close ends a pending sign-in.
func (h *OAuthHandler) Close() error {
	h.mu.Lock()
	p := h.prov
	h.mu.Unlock()
	if p != nil {
		return p.Close()
	}
	return nil
}

// discovered returns the provider, asking the server for its challenge first
// when the endpoints are not known yet.
func (h *OAuthHandler) discovered(ctx context.Context, scope string) (*auth.AuthCodeProvider, error) {
	if scope != h.scope {
		return nil, fmt.Errorf("mcp: OAuth: scope %q is not this server's (%q): %w", scope, h.scope, auth.ErrNoCredential)
	}
	h.mu.Lock()
	p := h.prov
	h.mu.Unlock()
	if p != nil {
		return p, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.server, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mcp: OAuth: ask the server for its sign-in: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	return h.provider(ctx, challenges)
}

// provider returns the provider, discovering the endpoints the first time.
func (h *OAuthHandler) provider(ctx context.Context, challenges []oauthex.Challenge) (*auth.AuthCodeProvider, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.prov != nil {
		return h.prov, nil
	}
	prm, err := h.resourceMetadata(ctx, challenges)
	if err != nil {
		return nil, err
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := sdkauth.GetAuthServerMetadata(ctx, issuer, h.client)
	if err != nil {
		return nil, fmt.Errorf("mcp: OAuth: the metadata of the authorization server %s: %w", issuer, err)
	}
	if asm == nil {
		return nil, fmt.Errorf("mcp: OAuth: the authorization server %s publishes no metadata (RFC 8414); sign in cannot start", issuer)
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("mcp: OAuth: the authorization server %s does not offer PKCE with S256, which the sign-in requires", issuer)
	}
	scopes := h.cfg.Scopes
	if scopes == nil {
		scopes = strings.Fields(bearerParam(challenges, "scope"))
	}
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	p, err := auth.NewAuthCodeProvider(auth.AuthCodeConfig{
		OAuth2: oauth2.Config{
			ClientID: h.cfg.ClientID,
			Endpoint: oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint},
			Scopes:   scopes,
		},
		Store:      h.cfg.Store,
		Listen:     h.cfg.Listen,
		Timeout:    h.cfg.Timeout,
		Resource:   prm.Resource,
		HTTPClient: h.client,
		Logger:     h.cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("mcp: OAuth: %w", err)
	}
	h.prov = p
	return p, nil
}

// resourceMetadata fetches the server's protected-resource metadata: from the
// URL its challenge names, else at the well-known paths (RFC 9728 section 3.1,
// as the MCP authorization specification orders them).
func (h *OAuthHandler) resourceMetadata(ctx context.Context, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, error) {
	type candidate struct{ url, resource string }
	var cands []candidate
	if u := bearerParam(challenges, "resource_metadata"); u != "" {
		cands = append(cands, candidate{u, h.server})
	}
	if ru, err := url.Parse(h.server); err == nil {
		mu := *ru
		mu.RawQuery, mu.Fragment = "", ""
		mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
		cands = append(cands, candidate{mu.String(), h.server})
		mu.Path = "/.well-known/oauth-protected-resource"
		root := *ru
		root.Path, root.RawQuery, root.Fragment = "", "", ""
		cands = append(cands, candidate{mu.String(), root.String()})
	}
	var errs []error
	for _, c := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, h.client)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("mcp: OAuth: the server's protected-resource metadata names no authorization server")
		}
		return prm, nil
	}
	return nil, fmt.Errorf("mcp: OAuth: the server requires a sign-in but publishes no usable protected-resource metadata (RFC 9728); set credentials = \"env\" with a token instead: %w", errors.Join(errs...))
}

// bearerParam returns a parameter of the Bearer challenge.
func bearerParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

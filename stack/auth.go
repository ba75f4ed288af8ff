package stack

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/middleware/auth"
	_ "github.com/mcs-go/mcs/middleware/auth/postgres" // token stores by URL
	_ "github.com/mcs-go/mcs/middleware/auth/redis"
	_ "github.com/mcs-go/mcs/middleware/auth/sqlite"
)

// DefaultTokenFile is the SQLite file, next to the stack file, that keeps the
// tokens of the drivers with credentials = "oauth" when neither the driver's
// token_store nor an [auth] table names a store.
const DefaultTokenFile = "mcs-tokens.db"

// SignIn is a driver of the stack whose user signs in: credentials = "oauth"
// (the authorization code flow) or "device" (the device flow).
type SignIn struct {
	// Label is the driver's label.
	Label string
	// Mode is "oauth" or "device".
	Mode string
	// Scopes are the credential scopes the driver asks for: its label first,
	// then the scopes its scopes table binds, sorted.
	Scopes []string
	// Store is the URL of the token store, a password hidden; "memory:" keeps
	// the tokens in the process.
	Store string
}

// signer is a driver configuration whose user signs in.
type signer interface {
	signIn() *credentialSpec
}

// authState is what the stack keeps of its sign-ins: the [auth] table's store,
// and the stores and providers opened, shared by every Build and by
// [Stack.CredentialProvider], so that a pending sign-in and its link are the
// same whoever asks.
type authState struct {
	store string // the [auth] table's store URL, resolved; "" without the table

	mu        sync.Mutex
	stores    map[string]auth.TokenStore
	providers map[string]auth.CredentialProvider // by driver label
}

// parseAuth reads the [auth] table:
//
//	[auth]
//	store = "sqlite:tokens.db"   # relative to the stack file; "postgres://...", "redis://...", "memory:", a file path
//
// Nothing is opened.
func (s *Stack) parseAuth(root *Table) {
	if !root.Has("auth") {
		return
	}
	t := root.Sub("auth", "[auth]")
	v := t.String("store")
	if v == "" {
		t.Errorf("store", `is required; name the token store, such as store = "sqlite:tokens.db", "postgres://host/db" or "redis://127.0.0.1:6379/0"`)
		return
	}
	u, err := tokenStoreURL(v, t.Dir())
	if err != nil {
		t.Errorf("store", "%v", err)
		return
	}
	s.auth.store = u
}

// tokenStoreURL checks a token store URL and resolves a relative SQLite or file
// path against dir.
func tokenStoreURL(s, dir string) (string, error) {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || len(scheme) == 1 || strings.ContainsAny(scheme, `/\.`) {
		if !filepath.IsAbs(s) {
			s = filepath.Join(dir, s)
		}
		return s, nil // a token file
	}
	switch strings.ToLower(scheme) {
	case "memory":
		if rest != "" {
			return "", fmt.Errorf("%q: a memory store takes no path; write \"memory:\"", s)
		}
		return s, nil
	case "sqlite", "file":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return "", fmt.Errorf("%q names no file; write %s:tokens.db", s, strings.ToLower(scheme))
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		return strings.ToLower(scheme) + ":" + path, nil
	case "postgres", "postgresql", "redis", "rediss":
		if _, err := url.Parse(s); err != nil || !strings.HasPrefix(rest, "//") {
			return "", fmt.Errorf("%q is not a %s URL; write it as %s://host:port/...", auth.RedactURL(s), scheme, strings.ToLower(scheme))
		}
		return s, nil
	}
	return "", fmt.Errorf("unknown token store %q; use \"sqlite:PATH\" (relative to the stack file), \"postgres://...\", \"redis://...\", \"memory:\" or a file path", scheme)
}

// SignIns lists the drivers of the stack whose user signs in, in file order.
func (s *Stack) SignIns() []SignIn {
	var out []SignIn
	for _, d := range s.Drivers {
		sg, ok := d.Config.(signer)
		if !ok {
			continue
		}
		c := sg.signIn()
		if c == nil || (c.mode != credentialsOAuth && c.mode != credentialsDevice) {
			continue
		}
		out = append(out, SignIn{Label: d.Label, Mode: c.mode, Scopes: c.allScopes(), Store: auth.RedactURL(s.storeOf(c))})
	}
	return out
}

// allScopes returns the credential scopes of the driver: its label, then the
// others its scopes table binds, sorted.
func (c *credentialSpec) allScopes() []string {
	out := []string{c.label}
	for _, sc := range c.scopes {
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	slices.Sort(out[1:])
	return out
}

// storeOf returns the store URL of c: its token_store, else the [auth] table's,
// else the default of its mode.
func (s *Stack) storeOf(c *credentialSpec) string {
	switch {
	case c.store != "":
		return c.store
	case s.auth.store != "":
		return s.auth.store
	case c.mode == credentialsOAuth:
		return "sqlite:" + filepath.Join(filepath.Dir(s.File), DefaultTokenFile)
	}
	return "memory:"
}

// CredentialProvider returns the credential provider of the driver labelled
// label (credentials = "oauth" or "device"), opening its token store the first
// time. The drivers [Stack.Build] builds use the same provider, so a sign-in
// started here is theirs too. The provider is an *auth.AuthCodeProvider or an
// *auth.DeviceFlowProvider. [Stack.Close] closes the stores. The encryption
// key, when set, comes from the environment variable MCS_TOKEN_KEY. Safe for
// concurrent use.
func (s *Stack) CredentialProvider(ctx context.Context, label string) (auth.CredentialProvider, error) {
	for _, d := range s.Drivers {
		if d.Label != label {
			continue
		}
		if sg, ok := d.Config.(signer); ok {
			if c := sg.signIn(); c != nil && (c.mode == credentialsOAuth || c.mode == credentialsDevice) {
				return s.provider(ctx, c)
			}
		}
		return nil, fmt.Errorf("stack %s: driver %q does not sign in (its credentials are not \"oauth\" or \"device\")", s.File, label)
	}
	return nil, fmt.Errorf("stack %s: no driver is labelled %q", s.File, label)
}

// provider returns the provider of c, building it the first time.
func (s *Stack) provider(ctx context.Context, c *credentialSpec) (auth.CredentialProvider, error) {
	st := &s.auth
	st.mu.Lock()
	defer st.mu.Unlock()
	if p := st.providers[c.label]; p != nil {
		return p, nil
	}
	storeURL := s.storeOf(c)
	store := st.stores[storeURL]
	if store == nil {
		var opts []auth.StoreOption
		if k := os.Getenv(auth.EnvTokenKey); k != "" {
			key, err := auth.ParseKey(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", auth.EnvTokenKey, err)
			}
			opts = append(opts, auth.WithEncryptionKey(key))
		}
		var err error
		store, err = auth.OpenStore(ctx, storeURL, opts...)
		if err != nil {
			return nil, fmt.Errorf("token store %s: %w", auth.RedactURL(storeURL), err)
		}
		if st.stores == nil {
			st.stores = map[string]auth.TokenStore{}
			s.mu.Lock()
			s.closers = append(s.closers, s.closeAuth)
			s.mu.Unlock()
		}
		st.stores[storeURL] = store
	}
	var p auth.CredentialProvider
	switch c.mode {
	case credentialsOAuth:
		if c.mcpURL != "" {
			h, err := mcp.NewOAuthHandler(c.mcpURL, mcp.OAuthConfig{ClientID: c.oauth.ClientID, Scopes: c.oauth.Scopes, Scope: c.label, Store: store, HTTPClient: s.Host.HTTPClient})
			if err != nil {
				return nil, err
			}
			p = h
			break
		}
		ap, err := auth.NewAuthCodeProvider(auth.AuthCodeConfig{OAuth2: c.oauth, Store: store, HTTPClient: s.Host.HTTPClient, Resource: c.resource})
		if err != nil {
			return nil, err
		}
		p = ap
	case credentialsDevice:
		p = auth.NewDeviceFlowProvider(auth.DeviceFlowConfig{OAuth2: c.oauth, Store: store, HTTPClient: s.Host.HTTPClient})
	default:
		return nil, fmt.Errorf("driver %q does not sign in", c.label)
	}
	if st.providers == nil {
		st.providers = map[string]auth.CredentialProvider{}
	}
	st.providers[c.label] = p
	return p, nil
}

// closeAuth ends the pending sign-ins and closes the token stores.
func (s *Stack) closeAuth() error {
	st := &s.auth
	st.mu.Lock()
	providers, stores := st.providers, st.stores
	st.providers, st.stores = nil, nil
	st.mu.Unlock()
	for _, p := range providers {
		if c, ok := p.(io.Closer); ok {
			c.Close()
		}
	}
	var errs []error
	for _, store := range stores {
		if c, ok := store.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("close the token store: %w", errs[0])
	}
	return nil
}

// storePath returns the file a token store URL writes: the path of "sqlite:",
// "file:" and a plain path; "" for the others.
func storePath(u string) string {
	scheme, rest, ok := strings.Cut(u, ":")
	if !ok || len(scheme) == 1 || strings.ContainsAny(scheme, `/\.`) {
		return u
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "file":
		return strings.TrimPrefix(rest, "//")
	}
	return ""
}

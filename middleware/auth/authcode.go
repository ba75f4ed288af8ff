package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// DefaultSignInTimeout is how long a sign-in with the authorization code flow
// may take when [AuthCodeConfig.Timeout] is zero.
const DefaultSignInTimeout = 10 * time.Minute

// CallbackPath is the one path of the loopback listener that receives the
// authorization server's redirect.
const CallbackPath = "/callback"

// refreshLease bounds how long one process may hold the refresh of a token in a
// shared store; a process that dies holding it delays the others by at most
// this long.
const refreshLease = 30 * time.Second

// AuthCodeConfig configures an [AuthCodeProvider].
type AuthCodeConfig struct {
	// OAuth2 names the client and the authorization server: ClientID,
	// ClientSecret (usually empty: a native client is public, PKCE protects the
	// code), Endpoint.AuthURL, Endpoint.TokenURL, Endpoint.AuthStyle and Scopes
	// (the OAuth scopes requested for every MCS scope). RedirectURL is set by the
	// provider (the loopback listener); a value given here is ignored.
	OAuth2 oauth2.Config
	// Store keeps the tokens; nil means a new MemoryStore. A store several
	// processes share (see [OpenStore]) that implements [TokenLocker] has each
	// expiring token refreshed by one of them.
	Store TokenStore
	// Listen is the address of the loopback listener that receives the
	// redirect; "" means "127.0.0.1:0" (RFC 8252: the loopback address, an
	// ephemeral port). It must be a loopback address.
	Listen string
	// Timeout is how long a sign-in may take, from the challenge to the redirect;
	// 0 means [DefaultSignInTimeout].
	Timeout time.Duration
	// Resource, when set, is the resource indicator (RFC 8707) sent with the
	// authorization and token requests; MCP servers require it.
	Resource string
	// HTTPClient sends the token requests; nil means http.DefaultClient. The
	// provider uses a copy that follows a redirect only within the origin of the
	// request it answers.
	HTTPClient *http.Client
	// Logger receives one record per step (sign-in started, completed, refused,
	// token refreshed, store trouble); nil means slog.Default(). Records never
	// contain a token, a code or a verifier.
	Logger *slog.Logger
}

// AuthCodeProvider is a [CredentialProvider] that signs the user in with the
// OAuth 2.0 authorization code grant and PKCE (RFC 6749, RFC 7636) through the
// system browser and a loopback redirect (RFC 8252), and never blocks waiting
// for the user.
//
// Token(ctx, scope) works per MCS scope, in this order:
//
//  1. When a sign-in of the scope has ended since the last call, its outcome is
//     returned: the new access token, or the error that ended it (the user
//     declined, the state did not match, the code exchange failed, the timeout
//     ran out); after an error the next call starts a new sign-in.
//  2. The token stored for the scope is read from the store (on every call, so a
//     sign-out in another process is seen at once). One valid for more than
//     [ExpiryMargin] is returned.
//  3. An expiring token with a refresh token is refreshed (one request, form
//     encoded) and saved, the old refresh token kept when the server issues no
//     new one. When the store implements [TokenLocker], the refresh holds the
//     store's lease on the token, and a process that waited for the lease takes
//     the token another one refreshed meanwhile instead of refreshing again.
//     When the server refuses the refresh token it is deleted and the flow goes
//     on with step 4; when the request fails otherwise the error is returned and
//     the refresh token kept.
//  4. While a sign-in is pending, its *[Challenge] is returned again. Otherwise
//     a sign-in is started: a fresh PKCE verifier (S256) and state, a loopback
//     listener on [AuthCodeConfig.Listen] and a *Challenge whose URL is the
//     authorization URL.
//
// The listener serves one path, [CallbackPath], and accepts exactly one
// redirect: a GET whose state matches. A request with another path, method,
// Host or state is refused (and the sign-in goes on waiting); the first
// matching redirect ends the sign-in: with a code, the code is exchanged at the
// token endpoint (form encoded, with the verifier) and the token is saved
// before the browser is told that the sign-in is complete; with an error
// (error=access_denied) the sign-in fails. The listener closes then, or when
// the timeout runs out.
//
// Tokens are saved under a key derived from the scope, the client ID and the
// token URL. A token that cannot be saved fails the sign-in: nothing is half
// kept. Only the access token is ever handed out, never the refresh token.
//
// AuthCodeProvider is safe for concurrent use. Calls for one scope are
// serialised (a waiting call honours its context); calls for different scopes
// run in parallel. Tokens, codes and verifiers appear in no error, challenge or
// log record. Close ends the pending sign-ins.
type AuthCodeProvider struct {
	oauthClient
	store    TokenStore
	listen   string
	timeout  time.Duration
	resource string
	log      *slog.Logger
	now      func() time.Time

	mu     sync.Mutex
	scopes map[string]*codeState
}

var _ CredentialProvider = (*AuthCodeProvider)(nil)

// codeState is the state of one scope; sem (capacity 1) guards the rest.
type codeState struct {
	sem     chan struct{}
	pending *signIn
	cache   cachedToken
}

// cachedToken keeps the last decoded store entry, so that a call whose entry is
// unchanged decodes nothing.
type cachedToken struct {
	raw    string
	expiry time.Time
	tok    *oauth2.Token
}

// signIn is one pending sign-in: its listener and, once done is closed, its
// outcome.
type signIn struct {
	state     string
	verifier  string
	redirect  string
	host      string // the Host header the redirect must carry
	challenge Challenge
	srv       *http.Server

	once sync.Once
	done chan struct{}
	tok  *oauth2.Token // the outcome, set before done is closed
	err  error

	mu   sync.Mutex
	used bool // a redirect with the right state arrived
}

// NewAuthCodeProvider returns a provider for cfg. It fails when the client ID or
// an endpoint is missing, when an endpoint is not an absolute https URL (http is
// accepted on a loopback host) or when Listen is not a loopback address.
func NewAuthCodeProvider(cfg AuthCodeConfig) (*AuthCodeProvider, error) {
	if cfg.OAuth2.ClientID == "" {
		return nil, fmt.Errorf("auth: authorization code flow: %w: OAuth2.ClientID is empty; set it to the client ID registered with the authorization server", ErrNoCredential)
	}
	for _, e := range []struct{ name, v string }{{"AuthURL", cfg.OAuth2.Endpoint.AuthURL}, {"TokenURL", cfg.OAuth2.Endpoint.TokenURL}} {
		if e.v == "" {
			return nil, fmt.Errorf("auth: authorization code flow: %w: OAuth2.Endpoint.%s is empty; set it to the server's endpoint", ErrNoCredential, e.name)
		}
		if err := checkEndpoint(e.v); err != nil {
			return nil, fmt.Errorf("auth: authorization code flow: OAuth2.Endpoint.%s %w", e.name, err)
		}
	}
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("auth: authorization code flow: Listen %q is not a loopback address with a port; use \"127.0.0.1:0\" (RFC 8252)", listen)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultSignInTimeout
	}
	p := &AuthCodeProvider{
		oauthClient: oauthClient{
			cfg: oauth2.Config{
				ClientID:     cfg.OAuth2.ClientID,
				ClientSecret: cfg.OAuth2.ClientSecret,
				Endpoint:     cfg.OAuth2.Endpoint,
				Scopes:       slices.Clone(cfg.OAuth2.Scopes),
			},
			client: cfg.HTTPClient,
		},
		store:    cfg.Store,
		listen:   listen,
		timeout:  timeout,
		resource: cfg.Resource,
		log:      cfg.Logger,
		now:      time.Now,
		scopes:   make(map[string]*codeState),
	}
	if cfg.Resource != "" {
		p.extra = url.Values{"resource": {cfg.Resource}}
	}
	if p.store == nil {
		p.store = NewMemoryStore()
	}
	if p.client == nil {
		p.client = http.DefaultClient
	}
	p.client = sameOriginRedirects(p.client)
	if p.log == nil {
		p.log = slog.Default()
	}
	return p, nil
}

// checkEndpoint accepts an absolute https URL, or http on a loopback host.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return errors.New("is not an absolute URL")
	}
	if u.User != nil {
		return errors.New("holds user info; put the client's credentials in ClientID and ClientSecret")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if h := u.Hostname(); h == "localhost" || net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback() {
			return nil
		}
		return errors.New("uses http on a host that is not loopback; use https")
	}
	return fmt.Errorf("uses %q; use https", u.Scheme)
}

// Token returns an access token for scope, or a *Challenge the user must
// complete first (see [AuthCodeProvider] for the steps). Errors: an empty scope,
// a store that cannot be read (the error says so; nothing is signed in anew), a
// sign-in that failed, a refresh the server could not answer, and ctx's error.
func (p *AuthCodeProvider) Token(ctx context.Context, scope string) (string, error) {
	if scope == "" {
		return "", errEmptyScope
	}
	st, err := p.lock(ctx, scope)
	if err != nil {
		return "", err
	}
	defer func() { <-st.sem }()
	return p.token(ctx, scope, st)
}

// Wait blocks until the pending sign-in of scope ends, ctx ends or the sign-in
// times out, and returns nil when it ended with a token (the next Token call
// returns it) or the error that ended it. Without a pending sign-in it returns
// nil at once. It is for programs that sign in ahead of time: call Token, show
// the challenge, then Wait.
func (p *AuthCodeProvider) Wait(ctx context.Context, scope string) error {
	p.mu.Lock()
	st := p.scopes[scope]
	p.mu.Unlock()
	if st == nil {
		return nil
	}
	st2, err := p.lock(ctx, scope)
	if err != nil {
		return err
	}
	si := st2.pending
	<-st2.sem
	if si == nil {
		return nil
	}
	select {
	case <-si.done:
		return si.err
	case <-ctx.Done():
		return fmt.Errorf("auth: scope %q: %w", scope, context.Cause(ctx))
	}
}

// Forget drops the token of scope from the store (sign out) and ends a pending
// sign-in. It waits for a running Token call of the same scope, bounded by ctx.
func (p *AuthCodeProvider) Forget(ctx context.Context, scope string) error {
	st, err := p.lock(ctx, scope)
	if err != nil {
		return err
	}
	defer func() { <-st.sem }()
	if st.pending != nil {
		st.pending.finish(nil, errors.New("signed out"))
		st.pending = nil
	}
	st.cache = cachedToken{}
	if err := p.store.Delete(p.storeKey(scope)); err != nil {
		return fmt.Errorf("auth: scope %q: delete the token: %w", scope, err)
	}
	return nil
}

// Status reports what the store holds for scope, without any secret.
func (p *AuthCodeProvider) Status(ctx context.Context, scope string) (TokenStatus, error) {
	return tokenStatus(p.store, p.storeKey(scope), scope, p.now())
}

// Close ends every pending sign-in and closes its listener. The provider stays
// usable: a later Token call starts a new sign-in.
func (p *AuthCodeProvider) Close() error {
	p.mu.Lock()
	states := make([]*codeState, 0, len(p.scopes))
	for _, st := range p.scopes {
		states = append(states, st)
	}
	p.mu.Unlock()
	for _, st := range states {
		st.sem <- struct{}{}
		if st.pending != nil {
			st.pending.finish(nil, errors.New("the program ended the sign-in"))
			st.pending = nil
		}
		<-st.sem
	}
	return nil
}

func (p *AuthCodeProvider) lock(ctx context.Context, scope string) (*codeState, error) {
	p.mu.Lock()
	st := p.scopes[scope]
	if st == nil {
		st = &codeState{sem: make(chan struct{}, 1)}
		p.scopes[scope] = st
	}
	p.mu.Unlock()
	select {
	case st.sem <- struct{}{}:
		return st, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("auth: scope %q: %w", scope, context.Cause(ctx))
	}
}

// StoreKey returns the key under which the token of scope is kept in the store,
// for programs that inspect or prepare a store.
func (p *AuthCodeProvider) StoreKey(scope string) string { return p.storeKey(scope) }

// storeKey derives the store key of scope; the escaped parts contain no ':' or '@'.
func (p *AuthCodeProvider) storeKey(scope string) string {
	return "oauth2-code:" + url.QueryEscape(scope) + ":" + url.QueryEscape(p.cfg.ClientID) + "@" + p.cfg.Endpoint.TokenURL
}

func (p *AuthCodeProvider) token(ctx context.Context, scope string, st *codeState) (string, error) {
	if si := st.pending; si != nil {
		select {
		case <-si.done:
			st.pending = nil
			if si.err != nil {
				return "", fmt.Errorf("auth: scope %q: %w", scope, si.err)
			}
		default:
		}
	}
	now := p.now()
	key := p.storeKey(scope)
	cur, err := p.load(st, key)
	if err != nil {
		return "", fmt.Errorf("auth: scope %q: %w", scope, err)
	}
	if fresh(cur, now) {
		if st.pending != nil {
			st.pending.finish(nil, errors.New("signed in elsewhere"))
			st.pending = nil
		}
		return cur.AccessToken, nil
	}
	if cur != nil && cur.RefreshToken != "" {
		tok, err := p.refreshShared(ctx, st, key, now)
		if err == nil {
			return tok.AccessToken, nil
		}
		if oe, ok := errors.AsType[*OAuthError](err); !ok || !oe.refused() {
			return "", fmt.Errorf("auth: scope %q: refresh the token (kept for the next call): %w", scope, err)
		}
		p.log.Warn("auth: refresh token rejected; a new sign-in is needed", "scope", scope, "error", err)
		if err := p.store.Delete(key); err != nil {
			return "", fmt.Errorf("auth: scope %q: delete the rejected token: %w", scope, err)
		}
		st.cache = cachedToken{}
	}
	if st.pending != nil {
		return "", st.pending.newChallenge()
	}
	return "", p.start(scope, key, st)
}

// fresh reports whether tok can be handed out at now.
func fresh(tok *oauth2.Token, now time.Time) bool {
	if tok == nil || tok.AccessToken == "" {
		return false
	}
	return tok.Expiry.IsZero() || now.Add(ExpiryMargin).Before(tok.Expiry)
}

// load reads the token under key; nil when there is none.
func (p *AuthCodeProvider) load(st *codeState, key string) (*oauth2.Token, error) {
	raw, expiry, ok, err := p.store.Load(key)
	if err != nil {
		return nil, storeErr("read", err)
	}
	if !ok {
		st.cache = cachedToken{}
		return nil, nil
	}
	if st.cache.tok != nil && st.cache.raw == raw && st.cache.expiry.Equal(expiry) {
		return st.cache.tok, nil
	}
	tok, err := decodeToken(raw, expiry)
	if err != nil {
		return nil, err
	}
	st.cache = cachedToken{raw: raw, expiry: expiry, tok: tok}
	return tok, nil
}

// refreshShared refreshes the token under key, holding the store's lease on it
// when the store has one, and saves the result.
func (p *AuthCodeProvider) refreshShared(ctx context.Context, st *codeState, key string, now time.Time) (*oauth2.Token, error) {
	if l, ok := p.store.(TokenLocker); ok {
		unlock, err := l.Lock(ctx, key, refreshLease)
		if err != nil {
			return nil, storeErr("lock", err)
		}
		defer unlock()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, refreshLease*2/3)
		defer cancel()
	}
	cur, err := p.load(st, key) // another process may have refreshed it meanwhile
	if err != nil {
		return nil, err
	}
	if now = p.now(); fresh(cur, now) {
		return cur, nil
	}
	if cur == nil || cur.RefreshToken == "" {
		return nil, &OAuthError{Endpoint: "refresh", Description: "the token was removed while it was refreshed"}
	}
	tok, err := p.refresh(ctx, cur, now)
	if err != nil {
		return nil, err
	}
	if s, _ := cur.Extra("scope").(string); s != "" && tok.Extra("scope") == nil {
		tok = tok.WithExtra(map[string]any{"scope": s})
	}
	if err := p.save(st, key, tok); err != nil {
		return nil, err
	}
	p.log.Info("auth: token refreshed", "key", keyScope(key), "expiry", tok.Expiry)
	return tok, nil
}

// save stores tok under key.
func (p *AuthCodeProvider) save(st *codeState, key string, tok *oauth2.Token) error {
	raw, err := encodeToken(tok, p.cfg.Scopes)
	if err != nil {
		return err
	}
	if err := p.store.Save(key, raw, tok.Expiry); err != nil {
		return storeErr("write", err)
	}
	if st != nil {
		st.cache = cachedToken{}
	}
	return nil
}

// start begins a sign-in of scope: verifier, state, listener, challenge.
func (p *AuthCodeProvider) start(scope, key string, st *codeState) error {
	ln, err := net.Listen("tcp", p.listen)
	if err != nil {
		return fmt.Errorf("auth: scope %q: open the loopback listener for the sign-in on %s: %w", scope, p.listen, err)
	}
	addr := ln.Addr().String()
	si := &signIn{
		state:    oauth2.GenerateVerifier(), // 32 random bytes, URL-safe: a good state too
		verifier: oauth2.GenerateVerifier(),
		redirect: "http://" + addr + CallbackPath,
		host:     addr,
		done:     make(chan struct{}),
	}
	cfg := p.cfg
	cfg.RedirectURL = si.redirect
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(si.verifier)}
	if p.resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", p.resource))
	}
	link := cfg.AuthCodeURL(si.state, opts...)
	si.challenge = Challenge{
		Message: fmt.Sprintf("To grant access to %q, open %s in a browser on this computer and sign in, then ask again.", scope, link) + authHostNotice(p.cfg.Endpoint.AuthURL),
		URL:     link,
		Scope:   scope,
	}
	si.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.callback(w, r, scope, key, si) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go si.srv.Serve(ln)
	timer := time.AfterFunc(p.timeout, func() {
		si.finish(nil, fmt.Errorf("the sign-in was not completed within %s; the next call shows a new link", p.timeout))
	})
	go func() {
		<-si.done
		timer.Stop()
		// The redirect's page is still being written: let it finish.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if si.srv.Shutdown(ctx) != nil {
			si.srv.Close()
		}
	}()
	st.pending = si
	p.log.Info("auth: sign-in started", "scope", scope, "redirect", si.redirect)
	return si.newChallenge()
}

// authHostNotice names the host of the authorization URL plainly.
func authHostNotice(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" The sign-in page is on the site %s.", strings.ToLower(u.Hostname()))
}

func (si *signIn) newChallenge() *Challenge {
	c := si.challenge
	return &c
}

// finish records the outcome once and closes done.
func (si *signIn) finish(tok *oauth2.Token, err error) {
	si.once.Do(func() {
		si.tok, si.err = tok, err
		close(si.done)
	})
}

// callback serves the loopback listener: one redirect with the right state.
func (p *AuthCodeProvider) callback(w http.ResponseWriter, r *http.Request, scope, key string, si *signIn) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	refuse := func(status int, msg string) {
		p.log.Warn("auth: sign-in redirect refused", "scope", scope, "reason", msg)
		page(w, status, "Sign-in refused", msg)
	}
	switch {
	case r.URL.Path != CallbackPath:
		refuse(http.StatusNotFound, "This address serves only the sign-in redirect.")
		return
	case r.Method != http.MethodGet:
		refuse(http.StatusMethodNotAllowed, "The sign-in redirect must be a GET request.")
		return
	case r.Host != si.host:
		refuse(http.StatusBadRequest, "The request names another host than the sign-in listener.")
		return
	}
	q := r.URL.Query()
	if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(si.state)) != 1 {
		refuse(http.StatusBadRequest, "The state of this redirect does not match the sign-in mcs started; use the link mcs showed last.")
		return
	}
	si.mu.Lock()
	used := si.used
	si.used = true
	si.mu.Unlock()
	if used {
		refuse(http.StatusConflict, "This sign-in has already received its redirect.")
		return
	}
	select {
	case <-si.done:
		refuse(http.StatusGone, "This sign-in has ended; ask again for a new link.")
		return
	default:
	}
	if e := q.Get("error"); e != "" {
		oe := &OAuthError{Endpoint: "authorization", Code: cleanText(e, 64), Description: cleanText(q.Get("error_description"), maxDescription)}
		err := fmt.Errorf("the authorization server ended the sign-in: %w", oe)
		if oe.Code == "access_denied" {
			err = fmt.Errorf("the user declined the sign-in; the next call shows a new link: %w", oe)
		}
		si.finish(nil, err)
		p.log.Warn("auth: sign-in failed", "scope", scope, "error", oe)
		page(w, http.StatusOK, "Sign-in not completed", "The authorization server answered "+oe.Code+". You can close this tab.")
		return
	}
	code := q.Get("code")
	if code == "" {
		si.finish(nil, errors.New("the redirect carried neither a code nor an error; the next call shows a new link"))
		page(w, http.StatusBadRequest, "Sign-in failed", "The redirect carried no authorization code.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	tok, err := p.exchange(ctx, si, code)
	if err == nil {
		err = p.save(nil, key, tok)
	}
	if err != nil {
		si.finish(nil, fmt.Errorf("sign-in failed; the next call shows a new link: %w", err))
		p.log.Warn("auth: sign-in failed", "scope", scope, "error", err)
		page(w, http.StatusBadGateway, "Sign-in failed", "The token could not be obtained or kept; the program reports why. You can close this tab.")
		return
	}
	si.finish(tok, nil)
	p.log.Info("auth: signed in", "scope", scope, "expiry", tok.Expiry)
	page(w, http.StatusOK, "Signed in", "You are signed in. You can close this tab and go back to the program.")
}

// exchange trades the code for a token (RFC 6749 section 4.1.3, with the PKCE
// verifier of RFC 7636 section 4.5), form encoded.
func (p *AuthCodeProvider) exchange(ctx context.Context, si *signIn, code string) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {si.redirect},
		"code_verifier": {si.verifier},
	}
	a, err := p.post(ctx, "token", p.cfg.Endpoint.TokenURL, form, code, si.verifier)
	if err != nil {
		return nil, err
	}
	return a.token("token", p.now())
}

// page writes a small HTML page for the browser.
func page(w http.ResponseWriter, status int, title, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>%s</title><h1>%s</h1><p>%s</p>\n",
		html.EscapeString(title), html.EscapeString(title), html.EscapeString(msg))
}

// keyScope returns the scope part of a store key, for log records.
func keyScope(key string) string {
	_, rest, _ := strings.Cut(key, ":")
	s, _, _ := strings.Cut(rest, ":")
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

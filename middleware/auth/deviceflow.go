package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/internal/origin"
	"github.com/mcs-go/mcs/internal/textcut"
)

// ExpiryMargin is how long before its expiry a cached access token is treated as
// expired, so that a token handed to a driver does not lapse in flight.
const ExpiryMargin = 60 * time.Second

const (
	defaultInterval = 5 * time.Second // RFC 8628 section 3.2: no interval means 5 s
	slowDownStep    = 5 * time.Second // RFC 8628 section 3.5
	maxInterval     = time.Hour
	maxExpiresIn    = 10 * 365 * 24 * time.Hour
	maxBody         = 1 << 20
	maxDescription  = 200
)

const deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

// DeviceFlowConfig configures a [DeviceFlowProvider].
type DeviceFlowConfig struct {
	// OAuth2 names the client and the authorization server: ClientID, ClientSecret
	// (usually empty for a device client), Endpoint.DeviceAuthURL, Endpoint.TokenURL,
	// Endpoint.AuthStyle and Scopes (the OAuth scopes requested for every MCS scope).
	// Every request sends the client credentials in an Authorization header with
	// AuthStyleInHeader and in the form otherwise. Other fields are not used.
	OAuth2 oauth2.Config
	// Store keeps the tokens; nil means a new MemoryStore.
	Store TokenStore
	// HTTPClient sends the requests to the authorization server; nil means
	// http.DefaultClient. The provider uses a copy that follows a redirect only
	// within the origin (scheme, host and port) of the request it answers, so
	// the form with the client's credentials is never resent elsewhere.
	HTTPClient *http.Client
	// Logger receives one record per step of the flow (authorization started,
	// completed, refreshed, refresh rejected, store trouble); nil means
	// slog.Default(). Records never contain a token or a device code.
	Logger *slog.Logger
}

// OAuthError is an answer of the authorization server that is not a token: an
// error response (RFC 6749 section 5.2) or a response that cannot be used. Its text
// never contains a credential: the server's description is cut short and any
// credential it echoes is redacted.
type OAuthError struct {
	// Endpoint is "device authorization", "token" or "refresh".
	Endpoint string
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// Code is the OAuth error code ("access_denied", "expired_token", ...); empty
	// when the server sent none.
	Code string
	// Description is the server's error_description, or what was wrong with the
	// response.
	Description string
}

// Error returns "oauth: <endpoint> endpoint answered <code> (HTTP <status>): <description>",
// leaving out the parts that are empty.
func (e *OAuthError) Error() string {
	var b strings.Builder
	b.WriteString("oauth: ")
	b.WriteString(e.Endpoint)
	b.WriteString(" endpoint answered")
	if e.Code != "" {
		b.WriteString(" ")
		b.WriteString(e.Code)
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Description != "" {
		b.WriteString(": ")
		b.WriteString(e.Description)
	}
	return b.String()
}

// refused reports whether the server refused the request (an OAuth error code, or
// a 4xx status other than 429) rather than failing to answer it; only a refusal
// gives up a refresh token or a pending authorization.
func (e *OAuthError) refused() bool {
	if e.StatusCode >= 500 || e.StatusCode == http.StatusTooManyRequests {
		return false
	}
	return e.Code != "" || e.StatusCode/100 == 4
}

// DeviceFlowProvider is a [CredentialProvider] that obtains tokens with the OAuth
// 2.0 device authorization grant (RFC 8628) and never blocks waiting for the user.
//
// Token(ctx, scope) works per MCS scope, in this order:
//
//  1. An access token cached for the scope (in memory, else in the store) that is
//     valid for more than [ExpiryMargin] is returned.
//  2. An expired token with a refresh token is refreshed (one request); the new
//     token is saved and returned (with the old refresh token when the server
//     issues no new one). When the server refuses the refresh token (an OAuth
//     error such as invalid_grant) it is deleted and the flow goes on with step 3;
//     when the request fails otherwise (no answer, a server error, an answer that
//     cannot be read) the error is returned and the refresh token is kept for the
//     next call.
//  3. Without a pending device authorization, one is started (one request) and a
//     *[Challenge] is returned: the verification URL (https only, without user
//     info, an ASCII host; its message names the host plainly and flags a
//     punycode name; verification_uri_complete
//     when the server sends one), the user code and the scope.
//  4. With a pending authorization, the token endpoint is polled once, but not
//     before the server's interval has passed since the last request (RFC 8628
//     section 3.5); until then the same challenge is returned without a request.
//     authorization_pending returns the same challenge; slow_down adds 5 s to the
//     interval and returns it too; success saves the token with its expiry and
//     returns it. expired_token, access_denied and every other refusal return an
//     error that wraps an *[OAuthError], and the next call starts a new
//     authorization; a poll that fails otherwise returns its error and the
//     authorization stays pending. A pending authorization whose codes have
//     expired is replaced by a new one at once.
//
// The context of a Token call bounds its request.
//
// Tokens are saved under a key derived from the scope, the client ID and the token
// URL, so several providers can share one store. The value is a small JSON object
// with the access token, its type and the refresh token; the entry's expiry is the
// access token's.
//
// DeviceFlowProvider is safe for concurrent use. Calls for one scope are
// serialised (a call waiting for another honours its context); calls for
// different scopes run in parallel. Tokens appear only in Token's return value:
// never in an error, a challenge or a log record.
type DeviceFlowProvider struct {
	oauthClient
	store TokenStore
	log   *slog.Logger
	now   func() time.Time // replaced in tests

	mu     sync.Mutex
	scopes map[string]*flowState
}

var _ CredentialProvider = (*DeviceFlowProvider)(nil)

// oauthClient sends the requests of a provider to the authorization server.
type oauthClient struct {
	cfg    oauth2.Config
	client *http.Client
	extra  url.Values // sent with every request to the token endpoint (RFC 8707 resource)
}

// flowState is the state of one scope; sem (capacity 1) guards everything else.
type flowState struct {
	sem     chan struct{}
	tok     *oauth2.Token
	pending *deviceAuth
}

// deviceAuth is a device authorization waiting for the user.
type deviceAuth struct {
	deviceCode string
	challenge  Challenge
	interval   time.Duration
	expiry     time.Time // zero: the server named none
	nextPoll   time.Time
}

// NewDeviceFlowProvider returns a provider for cfg. The OAuth2 configuration is
// copied; its endpoints are checked on the first Token call, which fails with an
// error that names the missing field.
func NewDeviceFlowProvider(cfg DeviceFlowConfig) *DeviceFlowProvider {
	p := &DeviceFlowProvider{
		oauthClient: oauthClient{
			cfg: oauth2.Config{
				ClientID:     cfg.OAuth2.ClientID,
				ClientSecret: cfg.OAuth2.ClientSecret,
				Endpoint:     cfg.OAuth2.Endpoint,
				Scopes:       slices.Clone(cfg.OAuth2.Scopes),
			},
			client: cfg.HTTPClient,
		},
		store:  cfg.Store,
		log:    cfg.Logger,
		now:    time.Now,
		scopes: make(map[string]*flowState),
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
	return p
}

// sameOriginRedirects returns a copy of c that follows a redirect only to the
// origin (scheme, host and port) of the request it answers: a 307 or 308 resends
// the form, which holds the client secret, a device code or a refresh token, so
// a redirect elsewhere is refused before anything is sent there. c's own
// redirect policy still applies.
func sameOriginRedirects(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = origin.Redirects(nil, c.CheckRedirect,
		func(target, home *url.URL) error {
			return fmt.Errorf("oauth: redirect refused: the authorization server redirected to %s://%s%s; only redirects within %s://%s are followed, so that credentials go nowhere else (set the endpoint URL to the new address if it is the server's)",
				target.Scheme, target.Host, target.Path, home.Scheme, home.Host)
		},
		func() error { return errors.New("oauth: stopped after 10 redirects") })
	return &cp
}

// Token returns an access token for scope, or a *Challenge the user must complete
// first (see [DeviceFlowProvider] for the steps). Errors: an empty scope or an
// incomplete configuration (wrapping [ErrNoCredential]), a store that cannot be
// read, an authorization server that cannot be reached or refuses (wrapping an
// *[OAuthError]), and ctx's error when ctx ends first.
func (p *DeviceFlowProvider) Token(ctx context.Context, scope string) (string, error) {
	if scope == "" {
		return "", errEmptyScope
	}
	if err := p.checkConfig(); err != nil {
		return "", err
	}
	st, err := p.lock(ctx, scope)
	if err != nil {
		return "", err
	}
	defer func() { <-st.sem }()
	return p.token(ctx, scope, st)
}

// Forget drops the token and any pending authorization of scope, in memory and in
// the store (sign out). The next Token call starts a new authorization. It waits
// for a running Token call of the same scope, bounded by ctx.
func (p *DeviceFlowProvider) Forget(ctx context.Context, scope string) error {
	st, err := p.lock(ctx, scope)
	if err != nil {
		return err
	}
	defer func() { <-st.sem }()
	st.tok, st.pending = nil, nil
	if err := p.store.Delete(p.storeKey(scope)); err != nil {
		return fmt.Errorf("auth: scope %q: delete the token: %w", scope, err)
	}
	return nil
}

func (p *DeviceFlowProvider) checkConfig() error {
	var missing string
	switch {
	case p.cfg.ClientID == "":
		missing = "OAuth2.ClientID is empty; set it to the client ID registered with the authorization server"
	case p.cfg.Endpoint.DeviceAuthURL == "":
		missing = "OAuth2.Endpoint.DeviceAuthURL is empty; set it to the server's device authorization endpoint"
	case p.cfg.Endpoint.TokenURL == "":
		missing = "OAuth2.Endpoint.TokenURL is empty; set it to the server's token endpoint"
	default:
		return nil
	}
	return fmt.Errorf("auth: device flow: %w: %s", ErrNoCredential, missing)
}

// lock returns the state of scope with its semaphore held.
func (p *DeviceFlowProvider) lock(ctx context.Context, scope string) (*flowState, error) {
	p.mu.Lock()
	st := p.scopes[scope]
	if st == nil {
		st = &flowState{sem: make(chan struct{}, 1)}
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

func (p *DeviceFlowProvider) token(ctx context.Context, scope string, st *flowState) (string, error) {
	now := p.now()
	if p.fresh(st.tok, now) {
		return st.tok.AccessToken, nil
	}
	key := p.storeKey(scope)
	stored, err := p.load(key)
	if err != nil {
		if _, corrupt := errors.AsType[*CorruptFileError](err); !corrupt {
			return "", fmt.Errorf("auth: scope %q: load the token: %w", scope, err)
		}
		p.log.Warn("auth: token store is corrupt; it is replaced with the next token", "scope", scope, "error", err)
		stored = nil
	}
	if p.fresh(stored, now) {
		st.tok, st.pending = stored, nil
		return stored.AccessToken, nil
	}
	cur := stored
	if cur == nil {
		cur = st.tok
	}
	if cur != nil && cur.RefreshToken != "" {
		if l, ok := p.store.(TokenLocker); ok {
			// A store shared by processes: refresh under its lease, and take the
			// token another process refreshed meanwhile.
			unlock, err := l.Lock(ctx, key, refreshLease)
			if err != nil {
				return "", fmt.Errorf("auth: scope %q: %w", scope, storeErr("lock", err))
			}
			defer unlock()
			again, err := p.load(key)
			if err != nil {
				return "", fmt.Errorf("auth: scope %q: load the token: %w", scope, err)
			}
			if now = p.now(); p.fresh(again, now) {
				st.tok, st.pending = again, nil
				return again.AccessToken, nil
			}
			if again != nil && again.RefreshToken != "" {
				cur = again
			}
		}
		tok, err := p.refresh(ctx, cur, now)
		if err == nil {
			st.tok, st.pending = tok, nil
			p.save(scope, key, tok)
			p.log.Info("auth: token refreshed", "scope", scope, "expiry", tok.Expiry)
			return tok.AccessToken, nil
		}
		if oe, ok := errors.AsType[*OAuthError](err); !ok || !oe.refused() {
			return "", fmt.Errorf("auth: scope %q: refresh the token (kept for the next call): %w", scope, err)
		}
		p.log.Warn("auth: refresh token rejected; starting a new device authorization", "scope", scope, "error", err)
	}
	if cur != nil {
		st.tok = nil
		if stored != nil {
			if err := p.store.Delete(key); err != nil {
				p.log.Warn("auth: cannot delete an expired token", "scope", scope, "error", err)
			}
		}
	}
	if pa := st.pending; pa != nil && (pa.expiry.IsZero() || now.Before(pa.expiry)) {
		if now.Before(pa.nextPoll) {
			return "", pa.newChallenge()
		}
		return p.poll(ctx, scope, key, st, now)
	}
	return "", p.start(ctx, scope, st, now)
}

// fresh reports whether tok can be handed out at now.
func (p *DeviceFlowProvider) fresh(tok *oauth2.Token, now time.Time) bool {
	if tok == nil || tok.AccessToken == "" {
		return false
	}
	return tok.Expiry.IsZero() || now.Add(ExpiryMargin).Before(tok.Expiry)
}

// storeKey derives the store key of scope; the escaped parts contain no ':' or '@'.
func (p *DeviceFlowProvider) storeKey(scope string) string {
	return "oauth2-device:" + url.QueryEscape(scope) + ":" + url.QueryEscape(p.cfg.ClientID) + "@" + p.cfg.Endpoint.TokenURL
}

// load returns the token stored under key, nil when there is none or the entry is
// unreadable (which is logged, never quoted).
func (p *DeviceFlowProvider) load(key string) (*oauth2.Token, error) {
	v, expiry, ok, err := p.store.Load(key)
	if err != nil || !ok {
		return nil, err
	}
	if strings.HasPrefix(v, sealedPrefix) {
		_, err := decodeToken(v, expiry) // the *KeyError: never a silent new sign-in
		return nil, err
	}
	var s storedToken
	if err := json.Unmarshal([]byte(v), &s); err != nil || (s.AccessToken == "" && s.RefreshToken == "") {
		p.log.Warn("auth: ignoring an unreadable stored token", "key", key)
		return nil, nil
	}
	return &oauth2.Token{AccessToken: s.AccessToken, TokenType: s.TokenType, RefreshToken: s.RefreshToken, Expiry: expiry}, nil
}

// save stores tok; a failure is logged, the token stays cached in memory.
func (p *DeviceFlowProvider) save(scope, key string, tok *oauth2.Token) {
	v, err := json.Marshal(storedToken{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken})
	if err == nil {
		err = p.store.Save(key, string(v), tok.Expiry)
	}
	if err != nil {
		p.log.Warn("auth: cannot save the token; it is kept in memory only", "scope", scope, "error", err)
	}
}

// refresh makes one refresh request (RFC 6749 section 6) with cur's refresh token.
// When the server issues no new refresh token, cur's stays valid and is kept.
func (p *oauthClient) refresh(ctx context.Context, cur *oauth2.Token, now time.Time) (*oauth2.Token, error) {
	// No scope: the refreshed token has the scope of the one it replaces.
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {cur.RefreshToken}}
	a, err := p.post(ctx, "refresh", p.cfg.Endpoint.TokenURL, form, cur.RefreshToken)
	if err != nil {
		return nil, err
	}
	tok, err := a.token("refresh", now)
	if err != nil {
		return nil, err
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = cur.RefreshToken
	}
	return tok, nil
}

// start makes one device authorization request (RFC 8628 section 3.1) and returns
// the challenge of the new pending authorization.
func (p *DeviceFlowProvider) start(ctx context.Context, scope string, st *flowState, now time.Time) error {
	st.pending = nil
	form := url.Values{}
	if len(p.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(p.cfg.Scopes, " "))
	}
	da, err := p.post(ctx, "device authorization", p.cfg.Endpoint.DeviceAuthURL, form)
	if err == nil {
		err = checkDeviceAuth(da)
	}
	if err != nil {
		return fmt.Errorf("auth: scope %q: start the device authorization: %w", scope, err)
	}
	link, complete := da.VerificationURI, false
	if da.VerificationURIComplete != "" && checkURL(da.VerificationURIComplete) == nil {
		link, complete = da.VerificationURIComplete, true
	}
	interval := defaultInterval
	if da.Interval > 0 {
		interval = clampSeconds(int64(da.Interval), maxInterval)
	}
	pa := &deviceAuth{
		deviceCode: da.DeviceCode,
		interval:   interval,
		nextPoll:   now.Add(interval),
	}
	if da.ExpiresIn > 0 {
		pa.expiry = now.Add(clampSeconds(int64(da.ExpiresIn), maxExpiresIn))
	}
	msg := fmt.Sprintf("To grant access to %q, open %s and enter the code %s, then ask again.", scope, link, da.UserCode)
	if complete {
		msg = fmt.Sprintf("To grant access to %q, open %s and confirm the code %s, then ask again.", scope, link, da.UserCode)
	}
	msg += hostNotice(link)
	pa.challenge = Challenge{Message: msg, URL: link, Code: da.UserCode, Scope: scope}
	st.pending = pa
	p.log.Info("auth: device authorization started", "scope", scope, "url", link, "interval", interval)
	return pa.newChallenge()
}

// poll asks the token endpoint once about st.pending.
func (p *DeviceFlowProvider) poll(ctx context.Context, scope, key string, st *flowState, now time.Time) (string, error) {
	pa := st.pending
	form := url.Values{"grant_type": {deviceCodeGrant}, "device_code": {pa.deviceCode}}
	a, err := p.post(ctx, "token", p.cfg.Endpoint.TokenURL, form, pa.deviceCode)
	var tok *oauth2.Token
	if err == nil {
		tok, err = a.token("token", now)
	}
	if err == nil {
		st.tok, st.pending = tok, nil
		p.save(scope, key, tok)
		p.log.Info("auth: device authorization completed", "scope", scope, "expiry", tok.Expiry)
		return tok.AccessToken, nil
	}
	oe, ok := errors.AsType[*OAuthError](err)
	switch {
	case ok && oe.Code == "authorization_pending":
		pa.nextPoll = now.Add(pa.interval)
		p.log.Debug("auth: device authorization pending", "scope", scope)
		return "", pa.newChallenge()
	case ok && oe.Code == "slow_down":
		pa.interval = min(pa.interval+slowDownStep, maxInterval)
		pa.nextPoll = now.Add(pa.interval)
		p.log.Debug("auth: device authorization pending; polling slower", "scope", scope, "interval", pa.interval)
		return "", pa.newChallenge()
	case !ok || !oe.refused():
		pa.nextPoll = now.Add(pa.interval)
		return "", fmt.Errorf("auth: scope %q: poll the token endpoint (the authorization stays pending): %w", scope, err)
	}
	st.pending = nil
	p.log.Warn("auth: device authorization failed", "scope", scope, "error", err)
	switch oe.Code {
	case "access_denied":
		return "", fmt.Errorf("auth: scope %q: the user declined the authorization; the next call starts a new one: %w", scope, err)
	case "expired_token":
		return "", fmt.Errorf("auth: scope %q: the code expired before the user entered it; the next call shows a new one: %w", scope, err)
	default:
		return "", fmt.Errorf("auth: scope %q: the authorization server refused the device code; the next call starts a new authorization: %w", scope, err)
	}
}

func (pa *deviceAuth) newChallenge() *Challenge {
	c := pa.challenge
	return &c
}

// answer is an answer of the device authorization endpoint (RFC 8628 section
// 3.2) or the token endpoint (RFC 6749 section 5.1), or an error answer of either
// (RFC 6749 section 5.2).
type answer struct {
	// token endpoint
	AccessToken  string        `json:"access_token"`
	TokenType    string        `json:"token_type"`
	RefreshToken string        `json:"refresh_token"`
	ExpiresIn    flexibleInt64 `json:"expires_in"` // also of the device code
	Scope        string        `json:"scope"`
	// device authorization endpoint
	DeviceCode              string        `json:"device_code"`
	UserCode                string        `json:"user_code"`
	VerificationURI         string        `json:"verification_uri"`
	VerificationURL         string        `json:"verification_url"` // a common misspelling
	VerificationURIComplete string        `json:"verification_uri_complete"`
	Interval                flexibleInt64 `json:"interval"`
	// error answer
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// flexibleInt64 accepts a JSON number or a string holding one; anything else is 0.
type flexibleInt64 int64

func (n *flexibleInt64) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1<<53 {
		*n = flexibleInt64(f)
	}
	return nil
}

// post sends form to one endpoint of the authorization server (named by endpoint
// in errors) with the client's credentials: in an Authorization header with
// AuthStyleInHeader, in the form otherwise (RFC 6749 section 2.3.1). ctx bounds the
// request. It returns the successful answer; an error answer, or one that cannot
// be read, is an *OAuthError whose description has the client secret and secrets
// redacted; a failed request is the error of the HTTP client.
func (p *oauthClient) post(ctx context.Context, endpoint, endpointURL string, form url.Values, secrets ...string) (*answer, error) {
	for k, v := range p.extra {
		form[k] = v
	}
	inHeader := p.cfg.Endpoint.AuthStyle == oauth2.AuthStyleInHeader
	if !inHeader {
		form.Set("client_id", p.cfg.ClientID)
		if p.cfg.ClientSecret != "" {
			form.Set("client_secret", p.cfg.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpointURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("oauth: %s endpoint: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if inHeader {
		req.SetBasicAuth(url.QueryEscape(p.cfg.ClientID), url.QueryEscape(p.cfg.ClientSecret))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("oauth: read the %s response: %w", endpoint, err)
	}
	fail := func(code, desc string) error {
		desc = redact(desc, append(secrets, p.cfg.ClientSecret)...)
		return &OAuthError{Endpoint: endpoint, StatusCode: resp.StatusCode, Code: cleanText(code, 64), Description: cleanText(desc, maxDescription)}
	}
	var a answer
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "text/plain" {
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fail("", "the response is neither JSON nor a form")
		}
		a = answer{
			AccessToken:             vals.Get("access_token"),
			TokenType:               vals.Get("token_type"),
			RefreshToken:            vals.Get("refresh_token"),
			Scope:                   vals.Get("scope"),
			DeviceCode:              vals.Get("device_code"),
			UserCode:                vals.Get("user_code"),
			VerificationURI:         vals.Get("verification_uri"),
			VerificationURL:         vals.Get("verification_url"),
			VerificationURIComplete: vals.Get("verification_uri_complete"),
			Error:                   vals.Get("error"),
			ErrorDescription:        vals.Get("error_description"),
		}
		a.ExpiresIn.UnmarshalJSON([]byte(vals.Get("expires_in")))
		a.Interval.UnmarshalJSON([]byte(vals.Get("interval")))
	} else if err := json.Unmarshal(body, &a); err != nil {
		if resp.StatusCode/100 != 2 {
			return nil, fail("", "")
		}
		return nil, fail("", "the response is not JSON")
	}
	if a.Error != "" || resp.StatusCode/100 != 2 {
		return nil, fail(a.Error, a.ErrorDescription)
	}
	if a.VerificationURI == "" {
		a.VerificationURI = a.VerificationURL
	}
	return &a, nil
}

// token returns the token of a successful answer of endpoint ("token" or
// "refresh"), received at now.
func (a *answer) token(endpoint string, now time.Time) (*oauth2.Token, error) {
	if a.AccessToken == "" {
		return nil, &OAuthError{Endpoint: endpoint, StatusCode: http.StatusOK, Description: "the response has no access_token"}
	}
	tok := &oauth2.Token{AccessToken: a.AccessToken, TokenType: a.TokenType, RefreshToken: a.RefreshToken}
	if a.Scope != "" {
		tok = tok.WithExtra(map[string]any{"scope": cleanText(a.Scope, 1024)})
	}
	if a.ExpiresIn > 0 {
		tok.Expiry = now.Add(clampSeconds(int64(a.ExpiresIn), maxExpiresIn))
	}
	return tok, nil
}

// checkDeviceAuth validates a device authorization answer before any of it reaches
// the user.
func checkDeviceAuth(da *answer) error {
	bad := func(what string) error {
		return &OAuthError{Endpoint: "device authorization", StatusCode: http.StatusOK, Description: what + "; check OAuth2.Endpoint.DeviceAuthURL"}
	}
	switch {
	case da.DeviceCode == "":
		return bad("the response has no device_code")
	case da.UserCode == "":
		return bad("the response has no user_code")
	case len(da.UserCode) > 64 || cleanText(da.UserCode, 64) != da.UserCode:
		return bad("the user_code is longer than 64 bytes or holds control characters")
	case da.VerificationURI == "":
		return bad("the response has no verification_uri")
	}
	if err := checkURL(da.VerificationURI); err != nil {
		return bad("the verification_uri " + err.Error())
	}
	return nil
}

// checkURL accepts an absolute https URL of reasonable length that a person can
// read as it is: no spaces, no invisible or direction-changing characters, no
// user info (https://accounts.example.com@evil.example/ goes to evil.example) and
// a host in ASCII (an internationalised name must come in its punycode form,
// which the challenge then flags).
func checkURL(s string) error {
	if len(s) > 2048 {
		return errors.New("is longer than 2048 bytes")
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r == ' ' || !unicode.IsPrint(r) }) {
		return errors.New("holds spaces or invisible characters")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return errors.New("is not an absolute https URL")
	}
	if !strings.EqualFold(u.Scheme, "https") {
		return fmt.Errorf("uses %q; only https verification URLs are accepted", u.Scheme)
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return errors.New("holds user info before its host (name@host), which hides where it leads")
	}
	host := u.Hostname()
	if strings.ContainsFunc(host, func(r rune) bool { return r > unicode.MaxASCII }) {
		return errors.New("has a host with non-ASCII characters, which can imitate another site")
	}
	if host == "" || strings.ContainsAny(host, "\\%") {
		return errors.New("has no readable host")
	}
	return nil
}

// hostNotice names the host of the verification URL s (checked by checkURL)
// plainly, and flags punycode labels (xn--...): the same letters in another
// script can imitate a familiar name.
func hostNotice(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	n := fmt.Sprintf(" The page is on the site %s.", host)
	for _, label := range strings.Split(host, ".") {
		if strings.HasPrefix(label, "xn--") {
			return n + " Warning: that name is an internationalised domain name in punycode (xn--); check that it is the site you expect before you enter the code."
		}
	}
	return n
}

// redact replaces every non-empty secret in s.
func redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// cleanText drops control characters and cuts s to at most max bytes on a rune
// boundary, marking the cut with "...".
func cleanText(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s)
	if len(s) <= max {
		return s
	}
	return textcut.Prefix(s, max-3) + "..."
}

// clampSeconds converts n seconds to a duration no longer than limit.
func clampSeconds(n int64, limit time.Duration) time.Duration {
	if n > int64(limit/time.Second) {
		return limit
	}
	return time.Duration(n) * time.Second
}

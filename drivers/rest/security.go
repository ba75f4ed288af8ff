package rest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/origin"
	"github.com/mcs-go/mcs/internal/redact"
	"github.com/mcs-go/mcs/middleware/auth"
)

// redacted replaces credentials in results and errors.
const redacted = "[REDACTED]"

// minSecretLen is the shortest credential that is searched for and removed
// from results and errors; shorter strings would match ordinary text.
const minSecretLen = 4

// credentials is what security schemes add to a request.
type credentials struct {
	header  http.Header
	query   [][2]string
	cookies []string
	secrets []string
}

// ErrUnboundScheme is wrapped by the error of a call whose security scheme is
// not bound to a credential scope by the operator (Config.Scopes, Config.Name or
// an orchestrator label). It wraps [auth.ErrNoCredential] too.
var ErrUnboundScheme = errors.New("security scheme not bound to a credential scope")

// ErrNoSecurityScheme is wrapped by the load error of a driver with
// Config.Credentials whose document gives none of the listed operations a
// security requirement while Config.AuthScheme is empty: the credentials would
// go nowhere. The message says to set Config.AuthScheme.
var ErrNoSecurityScheme = errors.New("the document declares no security scheme for its operations")

// errNoSecurityScheme is the load error of ErrNoSecurityScheme.
func errNoSecurityScheme() error {
	return fmt.Errorf("%w, so Config.Credentials would send nothing: set Config.AuthScheme (auth_scheme in a stack file) to how the API takes the credential, \"bearer\", \"basic\", \"header:NAME\" or \"query:NAME\", or send no credentials", ErrNoSecurityScheme)
}

// ErrCredentialHost is wrapped by the error of a call that would send
// credentials to a host the operator did not choose: a document fetched from
// SpecURL, without Config.BaseURL, names a server on another host.
var ErrCredentialHost = errors.New("credentials refused for a host the operator did not choose")

// scopeFor returns the scope asked of Config.Credentials for the document's
// security scheme name: Config.Scopes[name] when set, else Config.Name, else the
// label the driver is registered under in an orchestrator ([mcs.CallInfo]). A
// scheme name is never a scope by itself: the document picks its names, and a
// hostile document would name its schemes after the credentials it wants.
func (d *ToolDriver) scopeFor(ctx context.Context, use schemeUse) (string, error) {
	name := use.name
	if scope, ok := d.cfg.Scopes[name]; ok && !use.operator {
		if scope == "" {
			return "", fmt.Errorf("security scheme %q is mapped to no scope in Config.Scopes: %w", name, auth.ErrNoCredential)
		}
		return scope, nil
	}
	if d.cfg.Name != "" {
		return d.cfg.Name, nil
	}
	if info, ok := mcs.CallInfoFromContext(ctx); ok && info.Label != "" {
		return info.Label, nil
	}
	if use.operator {
		return "", fmt.Errorf("%w: Config.AuthScheme %q gets no credential; set Config.Name to the scope of the credential provider (%w)", ErrUnboundScheme, d.cfg.AuthScheme, auth.ErrNoCredential)
	}
	return "", fmt.Errorf("%w: the document's security scheme %q gets no credential; bind it with Config.Scopes = map[string]string{%q: \"<scope of the credential provider>\"}, or set Config.Name to ask for the driver's own scope for every scheme (%w)",
		ErrUnboundScheme, name, name, auth.ErrNoCredential)
}

// checkCredentialHost refuses to send credentials to target when the document
// was fetched from an http(s) SpecURL, no BaseURL pins the API, and target is on
// another host than the document: such a document would otherwise choose where
// the operator's credentials go.
func (d *ToolDriver) checkCredentialHost(target *url.URL) error {
	if d.base != nil || d.src.url == nil || target == nil || sameHost(d.src.url, target) {
		return nil
	}
	return fmt.Errorf("%w: the document fetched from %s sends this call to %s; set Config.BaseURL to the API's URL to send credentials there",
		ErrCredentialHost, d.src.url.Host, target.Host)
}

// credentials asks the provider for the tokens of the first security
// alternative of op it can satisfy, for a request to target; an operation the
// document gives no security requirement has the one scheme of
// Config.AuthScheme, when set. With no provider, or no security on op, the
// request goes without credentials. A *auth.Challenge
// from the provider is returned unchanged; when no alternative can be satisfied
// the first error that is not a missing credential is returned, else the first.
func (d *ToolDriver) credentials(ctx context.Context, op *operation, target *url.URL) (credentials, error) {
	if d.cfg.Credentials == nil {
		return credentials{}, nil
	}
	security := op.security
	if security == nil {
		if d.authScheme == nil || !op.undeclared {
			return credentials{}, nil
		}
		security = [][]schemeUse{{{name: "auth_scheme", scheme: d.authScheme, operator: true}}}
	}
	hostErr := d.checkCredentialHost(target)
	var first error
	for _, alt := range security {
		if len(alt) == 0 {
			return credentials{}, nil // anonymous access is allowed
		}
		if hostErr != nil {
			if first == nil {
				first = hostErr
			}
			continue
		}
		c, err := d.satisfy(ctx, alt)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return credentials{}, err
		}
		if first == nil || (errors.Is(first, auth.ErrNoCredential) && !errors.Is(err, auth.ErrNoCredential)) {
			first = err
		}
	}
	return credentials{}, first
}

// token asks Config.Credentials for the token of scope, and returns when ctx
// ends even if the provider ignores ctx: the provider runs in its own
// goroutine, which is left to finish on its own and whose answer is then
// dropped. The error of an ended ctx wraps its cause (the call's deadline).
func (d *ToolDriver) token(ctx context.Context, scope string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("credential for scope %q: %w", scope, context.Cause(ctx))
	}
	type answer struct {
		token string
		err   error
	}
	ch := make(chan answer, 1) // the provider never blocks on a call that left
	go func() {
		tok, err := d.cfg.Credentials.Token(ctx, scope)
		ch <- answer{tok, err}
	}()
	select {
	case a := <-ch:
		return a.token, a.err
	case <-ctx.Done():
		return "", fmt.Errorf("credential for scope %q: the provider did not answer in time: %w", scope, context.Cause(ctx))
	}
}

// satisfy applies every scheme of one alternative.
func (d *ToolDriver) satisfy(ctx context.Context, alt []schemeUse) (credentials, error) {
	c := credentials{header: http.Header{}}
	for _, use := range alt {
		s := use.scheme
		if s == nil {
			return credentials{}, fmt.Errorf("security scheme %q is not defined in the document's security schemes", use.name)
		}
		typ := strings.ToLower(s.Type)
		if typ == "mutualtls" {
			continue // the client's TLS configuration carries the certificate
		}
		switch typ {
		case "apikey", "http", "oauth2", "openidconnect":
		default:
			return credentials{}, fmt.Errorf("security scheme %q has type %q, which the driver does not support", use.name, s.Type)
		}
		scope, err := d.scopeFor(ctx, use)
		if err != nil {
			return credentials{}, err
		}
		token, err := d.token(ctx, scope)
		if err != nil {
			var ch *auth.Challenge
			if errors.As(err, &ch) {
				return credentials{}, err // unchanged, for the auth middleware
			}
			return credentials{}, fmt.Errorf("credential for security scheme %q: %w", use.name, err)
		}
		if token == "" {
			return credentials{}, fmt.Errorf("credential for security scheme %q: %w (the provider returned an empty token)", use.name, auth.ErrNoCredential)
		}
		if strings.ContainsAny(token, "\r\n\x00") {
			return credentials{}, fmt.Errorf("credential for security scheme %q contains a line break or NUL and cannot be sent", use.name)
		}
		c.secrets = append(c.secrets, secretForms(token)...)
		switch typ {
		case "apikey":
			if s.Name == "" {
				return credentials{}, fmt.Errorf("security scheme %q has no parameter name", use.name)
			}
			switch strings.ToLower(s.In) {
			case "header":
				c.header.Set(s.Name, token)
			case "query":
				c.query = append(c.query, [2]string{s.Name, token})
			case "cookie":
				if checkCookieValue("", token) != nil {
					return credentials{}, fmt.Errorf("credential for security scheme %q has characters a cookie cannot carry", use.name)
				}
				c.cookies = append(c.cookies, s.Name+"="+token)
			default:
				return credentials{}, fmt.Errorf("security scheme %q puts its key in %q; want header, query or cookie", use.name, s.In)
			}
		case "http":
			switch strings.ToLower(s.Scheme) {
			case "bearer", "":
				c.header.Set("Authorization", "Bearer "+token)
			case "basic":
				enc, plain := token, token
				if strings.Contains(token, ":") {
					enc = base64.StdEncoding.EncodeToString([]byte(token))
				} else if dec, err := base64.StdEncoding.DecodeString(token); err == nil {
					plain = string(dec)
				}
				for _, sec := range basicSecrets(enc, plain) {
					c.secrets = append(c.secrets, secretForms(sec)...)
				}
				c.header.Set("Authorization", "Basic "+enc)
			default:
				c.header.Set("Authorization", s.Scheme+" "+token)
			}
		default: // oauth2, openIdConnect
			c.header.Set("Authorization", "Bearer "+token)
		}
	}
	return c, nil
}

// redactor removes credentials from text. The zero value removes nothing.
type redactor struct {
	r       *strings.Replacer
	secrets []string // the credentials searched for, longest first
	longest int      // length of the longest credential searched for
}

func newRedactor(secrets ...[]string) redactor {
	var all []string
	for _, list := range secrets {
		for _, s := range list {
			if len(s) >= minSecretLen && !slices.Contains(all, s) {
				all = append(all, s)
			}
		}
	}
	if len(all) == 0 {
		return redactor{}
	}
	// Longest first, so that a secret containing another is removed whole.
	slices.SortFunc(all, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, redacted)
	}
	return redactor{r: strings.NewReplacer(pairs...), secrets: all, longest: len(all[0])}
}

func (r redactor) apply(s string) string {
	if r.r == nil {
		return s
	}
	return redact.ReplaceEscaped(r.r.Replace(s), r.secrets)
}

// cut returns the length of the prefix of s to redact when only its first n
// bytes are shown: n, extended to the end of any credential that starts before
// n and ends after it. Redacting exactly that prefix removes such a credential
// whole, and leaves out what follows it: once earlier credentials shrink to the
// marker, later bytes (a credential s holds only in part, at its end) would
// otherwise move into the part shown. s must be longer than n.
func (r redactor) cut(s string, n int) int {
	end := n
	for _, sec := range r.secrets {
		hi := min(len(s), n+len(sec)-1)
		for i := max(0, n-len(sec)+1); i < n; {
			j := strings.Index(s[i:hi], sec)
			if j < 0 {
				break
			}
			end = max(end, i+j+len(sec))
			i += j + 1
		}
	}
	return end
}

// plainHeaders are configured headers whose values are not secret (content
// negotiation and caching); the values of every other configured header are.
var plainHeaders = []string{"accept", "accept-encoding", "accept-language", "content-type", "user-agent", "cache-control", "pragma"}

// headerSecrets returns the values of configured headers, to be removed from
// results and errors: an operator who pins a header (X-Tenant, X-Signature,
// Authorization) pins something the model should not learn from an echo. The
// values of the plainHeaders are left alone.
func headerSecrets(h map[string]string) []string {
	var out []string
	for name, v := range h {
		if slices.Contains(plainHeaders, strings.ToLower(name)) {
			continue
		}
		out = append(out, v)
		if _, after, ok := strings.Cut(v, " "); ok {
			out = append(out, after) // "Bearer xyz": xyz alone too
		}
	}
	return out
}

// baseQuerySecrets returns the query values of the operator's BaseURL (a
// signature, a tenant, a key), to be removed from results and errors.
func baseQuerySecrets(u *url.URL) []string {
	if u == nil {
		return nil
	}
	var out []string
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return out
}

// secretForms returns s and the forms a server may echo it in: percent-encoded
// (query, path, every byte in either hex case), in upper and lower case, JSON
// escaped (with HTML escapes and "\/"), and base64 (standard and URL alphabets,
// padded and raw) of s and of "Bearer "+s, plus the part of s's base64 that is
// the same wherever s stands inside a longer base64 text.
func secretForms(s string) []string {
	if len(s) < minSecretLen {
		return []string{s}
	}
	out := []string{s, url.QueryEscape(s), url.PathEscape(s), strings.ToUpper(s), strings.ToLower(s)}
	var up, low strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&up, "%%%02X", s[i])
		fmt.Fprintf(&low, "%%%02x", s[i])
	}
	out = append(out, up.String(), low.String())
	if b, err := json.Marshal(s); err == nil {
		j := string(b[1 : len(b)-1])
		out = append(out, j, strings.ReplaceAll(j, "/", `\/`))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(s)), enc.EncodeToString([]byte("Bearer "+s)))
	}
	// Inside a longer text s starts at offset 0, 1 or 2 of a 3-byte group; the
	// characters that encode only bytes of s are the same wherever the text is.
	for k := range 3 {
		padded := append(make([]byte, k), s...)
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			e := enc.EncodeToString(padded)
			lead := (k*8 + 5) / 6                    // characters that mix in bytes before s
			tail := len(e) - (len(padded) / 3 * 4)   // characters of the last, partial group
			if end := len(e) - tail; end-lead >= 8 { // long enough not to match by chance
				out = append(out, e[lead:end])
			}
		}
	}
	return out
}

// basicSecrets returns what a server may echo of basic credentials: the
// encoded "user:password", the plain form and the password alone.
func basicSecrets(encoded, plain string) []string {
	out := []string{encoded, plain}
	if _, pw, ok := strings.Cut(plain, ":"); ok {
		out = append(out, pw, url.QueryEscape(pw))
	}
	return out
}

// userInfoSecrets returns what a server may echo of the basic credentials the
// HTTP client sends for the user info of u: the encoded pair, the plain pair
// and the password alone or, without a password ("https://TOKEN@host", sent
// as "TOKEN:"), the user name, which is then the credential. Nil without user
// info.
func userInfoSecrets(u *url.URL) []string {
	if u == nil || u.User == nil {
		return nil
	}
	user := u.User.Username()
	pw, ok := u.User.Password()
	plain := user + ":" + pw
	out := basicSecrets(base64.StdEncoding.EncodeToString([]byte(plain)), plain)
	if !ok {
		out = append(out, user, url.QueryEscape(user))
	}
	return out
}

// redactedError is an error whose message had credentials removed. It unwraps
// to the underlying cause so that errors.Is finds context errors.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactClientError rewrites an error of http.Client.Do: the request URL,
// which may carry an API key, is shown without its query and user info.
func redactClientError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	target := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		target = redactURL(u)
	}
	return &redactedError{msg: fmt.Sprintf("%s %s: %v", ue.Op, target, ue.Err), err: ue.Err}
}

// errRedirect is wrapped by the error of a call the server redirected to
// another host.
var errRedirect = errors.New("redirect refused")

// newClient returns a copy of c (nil: http.DefaultClient) that follows
// redirects only within the origin (scheme, host and port) of the original
// request, and at most 10 times. c's own redirect policy, if any, still applies.
func newClient(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cp := *c
	cp.CheckRedirect = origin.Redirects(nil, c.CheckRedirect,
		func(target, home *url.URL) error {
			if sameHost(home, target) {
				return fmt.Errorf("%w: the server redirected from %s to %s; only redirects within %s are followed", errRedirect, home.Scheme, target.Scheme, origin.String(home))
			}
			return fmt.Errorf("%w: the server redirected to another host (%s); only redirects to %s are followed", errRedirect, target.Host, home.Host)
		},
		func() error { return fmt.Errorf("%w: stopped after %d redirects", errRedirect, origin.MaxRedirects) })
	return &cp
}

// sameHost compares host and effective port.
func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname()) && origin.Port(a) == origin.Port(b)
}

// checkPinned refuses a request whose query changes a parameter the base URL
// fixes (a signature, a tenant): the model must not repeat a key the operator
// pinned in Config.BaseURL. query is the request's query after the arguments.
//
// Besides the key itself, a key that query parsers commonly read as the pinned
// one is refused: the same key in another case (ASP.NET), and the key followed
// by "[" or "." (tenant[]=, tenant[x]=, tenant.x=: PHP, Rails, qs, Spring), which
// such parsers let override or replace the pinned value.
func (op *operation) checkPinned(query url.Values) error {
	if op.base == nil || op.base.RawQuery == "" {
		return nil
	}
	pinned := op.base.Query()
	for k, vs := range pinned {
		if !slices.Equal(query[k], vs) {
			return op.argError("the query parameter %q is fixed by the driver's base URL and cannot be set by an argument; leave it out", k)
		}
	}
	for k := range query {
		if _, ok := pinned[k]; ok {
			continue
		}
		root := k
		if i := strings.IndexAny(k, "[."); i >= 0 {
			root = k[:i]
		}
		for p := range pinned {
			if strings.EqualFold(k, p) || strings.EqualFold(root, p) {
				return op.argError("the query parameter %q would be read as %q, which the driver's base URL fixes; an argument cannot set it, leave it out", k, p)
			}
		}
	}
	return nil
}

// checkPaths refuses a document whose path templates hold dot segments ("." or
// "..", also percent-encoded, also between encoded slashes as in "..%2F"): a
// server that decodes and normalises the path would send such an operation
// outside the API's base path (/v1/../admin).
func checkPaths(paths []string) error {
	for _, p := range paths {
		for _, seg := range strings.Split(p, "/") {
			dec, err := url.PathUnescape(seg)
			if err != nil {
				dec = seg
			}
			if strings.Contains(dec, "\\") {
				return dotSegmentError(p, seg)
			}
			for _, part := range strings.Split(dec, "/") {
				if part = strings.TrimSpace(part); part == "." || part == ".." {
					return dotSegmentError(p, seg)
				}
			}
		}
	}
	return nil
}

func dotSegmentError(path, seg string) error {
	return fmt.Errorf("the path template %q has the segment %q; dot segments and backslashes would leave the API's base path, so the document is refused (remove or rename that path)", path, seg)
}

package rest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

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

// credentials asks the provider for the tokens of the first security
// alternative of op it can satisfy. With no provider, or no security on op, the
// request goes without credentials. A *auth.Challenge from the provider is
// returned unchanged; when no alternative can be satisfied the first error that
// is not a missing credential is returned, else the first.
func (d *ToolDriver) credentials(ctx context.Context, op *operation) (credentials, error) {
	if op.security == nil || d.cfg.Credentials == nil {
		return credentials{}, nil
	}
	var first error
	for _, alt := range op.security {
		if len(alt) == 0 {
			return credentials{}, nil // anonymous access is allowed
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
		token, err := d.cfg.Credentials.Token(ctx, use.name)
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
		c.secrets = append(c.secrets, token, url.QueryEscape(token))
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
				c.secrets = append(c.secrets, basicSecrets(enc, plain)...)
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
	return r.r.Replace(s)
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

// sensitiveHeaderSecrets returns the values of configured headers whose names
// suggest credentials, to be removed from results and errors.
func sensitiveHeaderSecrets(h map[string]string) []string {
	var out []string
	for name, v := range h {
		n := strings.ToLower(name)
		for _, w := range []string{"auth", "key", "token", "secret", "session", "password", "cookie", "signature"} {
			if strings.Contains(n, w) {
				out = append(out, v)
				if _, after, ok := strings.Cut(v, " "); ok {
					out = append(out, after) // "Bearer xyz": xyz alone too
				}
				break
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
// redirects only to the host of the original request, never from https to
// http, and at most 10 times. c's own redirect policy, if any, still applies.
func newClient(c *http.Client) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cp := *c
	userPolicy := c.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return fmt.Errorf("%w: stopped after 10 redirects", errRedirect)
		}
		orig := via[0].URL
		if !sameHost(orig, req.URL) {
			return fmt.Errorf("%w: the server redirected to another host (%s); only redirects to %s are followed", errRedirect, req.URL.Host, orig.Host)
		}
		if orig.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("%w: the server redirected from https to %s", errRedirect, req.URL.Scheme)
		}
		if userPolicy != nil {
			return userPolicy(req, via)
		}
		return nil
	}
	return &cp
}

// sameHost compares host and effective port.
func sameHost(a, b *url.URL) bool {
	return strings.EqualFold(a.Hostname(), b.Hostname()) && effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

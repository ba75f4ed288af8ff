// Package origin holds the one same-origin rule of the module's HTTP clients:
// credentials and operator headers go only to the configured scheme, host and
// port, so a redirect anywhere else is refused before anything is sent there.
package origin

import (
	"net/http"
	"net/url"
	"strings"
)

// MaxRedirects is the most redirects one request follows.
const MaxRedirects = 10

// Same reports whether a and b have the same scheme, host and port, a missing
// port being the scheme's default. Nil URLs are never the same.
func Same(a, b *url.URL) bool {
	return a != nil && b != nil && strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) && Port(a) == Port(b)
}

// Port returns the port of u, or the default port of its scheme (443 for https,
// else 80).
func Port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// String returns scheme://host[:port] of u, for messages: no user, path or query.
func String(u *url.URL) string {
	return (&url.URL{Scheme: strings.ToLower(u.Scheme), Host: u.Host}).String()
}

// Redirects returns a CheckRedirect policy that follows a redirect only within the
// origin of home (nil: the origin of the request the redirect answers) and at most
// MaxRedirects times, then asks own (may be nil). A redirect elsewhere returns
// refuse(target, home) and one past the limit tooMany(); both errors are the
// caller's, so that each client names its own fix.
func Redirects(home *url.URL, own func(*http.Request, []*http.Request) error,
	refuse func(target, home *url.URL) error, tooMany func() error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		h := home
		if h == nil && len(via) > 0 {
			h = via[0].URL
		}
		if !Same(h, req.URL) {
			return refuse(req.URL, h)
		}
		if len(via) >= MaxRedirects {
			return tooMany()
		}
		if own != nil {
			return own(req, via)
		}
		return nil
	}
}

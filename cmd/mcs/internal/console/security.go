package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Names of the session cookie, the token parameter and the CSRF header.
const (
	CookieName = "mcs_console"
	TokenParam = "token"
	CSRFHeader = "X-CSRF-Token"
)

// randomString returns n random bytes in unpadded base64url.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// mac is HMAC-SHA256 of what under the server's key, base64url.
func (s *Server) mac(what string) string {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(what))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// session is the value of the session cookie, csrf the token every state
// change carries: both derived from the server's key, never the URL token.
func (s *Server) session() string { return s.mac("session") }
func (s *Server) csrf() string    { return s.mac("csrf:" + s.session()) }

// AllowedHosts returns the Host header values a console bound to addr (host:port,
// as the listener reports it) accepts: addr itself and, for a loopback address,
// the same port under localhost, 127.0.0.1 and [::1].
func AllowedHosts(addr string) []string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return []string{addr}
	}
	out := []string{net.JoinHostPort(host, port)}
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || strings.EqualFold(host, "localhost") {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			if hp := net.JoinHostPort(h, port); hp != out[0] {
				out = append(out, hp)
			}
		}
	}
	return out
}

func (s *Server) hostAllowed(host string) bool {
	for _, h := range s.hosts {
		if strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// guard applies the checks of every request, in order: the Host, the token
// exchange, the session cookie, and for a state change the method, the
// Origin, the content type and the CSRF token. next runs only when all pass.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secureHeaders(w)
		if !s.hostAllowed(r.Host) {
			s.refuse(w, r, http.StatusMisdirectedRequest, "This console answers only at "+s.hosts[0]+"; the Host "+r.Host+" is not its own (a DNS rebinding attempt, or a proxy in between).")
			return
		}
		if strings.HasPrefix(r.URL.Path, "/assets/") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		if tok := r.URL.Query().Get(TokenParam); tok != "" && r.Method == http.MethodGet {
			if !equal(tok, s.token) {
				s.refuse(w, r, http.StatusForbidden, "The token in this URL is not this console's. Open the URL mcs ui printed when it started.")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.session(), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			q := r.URL.Query()
			q.Del(TokenParam)
			path := r.URL.Path
			if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") || strings.HasPrefix(path, "/\\") {
				path = "/" // never a redirect to another host
			}
			to := url.URL{Path: path, RawQuery: q.Encode()}
			http.Redirect(w, r, to.String(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(CookieName)
		if err != nil || !equal(c.Value, s.session()) {
			s.refuse(w, r, http.StatusUnauthorized, "This console needs the token of the URL mcs ui printed when it started: open that URL.")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			next.ServeHTTP(w, r)
			return
		case http.MethodPost:
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			s.refuse(w, r, http.StatusMethodNotAllowed, "Method "+r.Method+" is not used by this console.")
			return
		}
		if o := r.Header.Get("Origin"); o == "" || !strings.EqualFold(o, "http://"+r.Host) && !strings.EqualFold(o, "https://"+r.Host) {
			s.refuse(w, r, http.StatusForbidden, "A change must come from the console's own pages (Origin "+o+" is not http://"+r.Host+").")
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			s.refuse(w, r, http.StatusUnsupportedMediaType, "A change is sent as application/json.")
			return
		}
		if !equal(r.Header.Get(CSRFHeader), s.csrf()) {
			s.refuse(w, r, http.StatusForbidden, "The request has no valid CSRF token; reload the page.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// secureHeaders are the headers of every response; pages add their CSP.
func secureHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", csp(""))
}

// csp is the Content-Security-Policy of a response: only the console's own
// script, and with a nonce; no inline style, no eval, no frames, no plugins,
// requests to the console only.
func csp(nonce string) string {
	script := "'none'"
	if nonce != "" {
		script = "'nonce-" + nonce + "'"
	}
	return "default-src 'none'; script-src " + script + "; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
		"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// refuse answers a request that failed a check: JSON for the API and the
// event stream, a short text page otherwise. Nothing of the request is echoed
// as markup.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/events" {
		writeJSONStatus(w, code, map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

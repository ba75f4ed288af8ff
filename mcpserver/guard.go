package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The checks of the HTTP handler that run before the SDK sees a request: the
// Host allow-list and the Origin check (DNS rebinding, cross-origin pages),
// the session cap, and the reading of the body (deadline, byte cap, batches).

// guards is what the checks are configured with, settled by New.
type guards struct {
	hosts   map[string]bool // lower case, no port, no final dot
	origins map[string]bool // normalized: scheme://host[:port], default port dropped
}

// newGuards settles the allowed hosts and origins; entries that can never
// match a request are reported to log and dropped.
func newGuards(o options, warn func(msg string, args ...any)) guards {
	g := guards{hosts: map[string]bool{}, origins: map[string]bool{}}
	for _, h := range o.hosts {
		name := hostName(h)
		if name == "" || strings.ContainsAny(name, "/ ") {
			warn("mcpserver: allowed host ignored: give a host name such as tools.example.com", "host", h)
			continue
		}
		g.hosts[name] = true
	}
	for _, raw := range o.origins {
		origin, ok := normalOrigin(raw)
		if !ok {
			warn("mcpserver: allowed origin ignored: give scheme and host, such as https://app.example.com", "origin", raw)
			continue
		}
		g.origins[origin] = true
	}
	return g
}

// hostName is the host of a Host header or of an allowed host: without the
// port and the brackets of an IPv6 address, lower case, without a final dot.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return strings.ToLower(host)
}

// normalOrigin is the comparable form of a web origin: scheme://host[:port],
// lower case, the scheme's default port dropped; ok is false for anything but
// an http or https origin (such as "null").
func normalOrigin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	return scheme + "://" + hostPort(scheme, u.Host), true
}

// hostPort is host[:port] in lower case without the scheme's default port.
func hostPort(scheme, host string) string {
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil &&
		((scheme == "http" && port == "80") || (scheme == "https" && port == "443")) {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return host
}

// hostAllowed reports whether the Host of r is one the server answers to:
// localhost, a loopback address, the address the client connected to, or an
// allowed host.
func (g guards) hostAllowed(r *http.Request) bool {
	name := hostName(r.Host)
	if name == "" {
		return false
	}
	if name == "localhost" || g.hosts[name] {
		return true
	}
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return true
	}
	// An address literal names the machine itself, never a page's domain: it
	// is allowed when it is the address the connection arrived on.
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if ap, err := netip.ParseAddrPort(local.String()); err == nil && ap.Addr().Unmap().WithZone("") == ip.WithZone("") {
			return true
		}
	}
	return false
}

// originAllowed reports whether every Origin header of r is allowed: absent,
// an allowed origin, or the server's own (its host and port are the Host the
// request was sent to, which passed hostAllowed).
func (g guards) originAllowed(r *http.Request) (bad string, ok bool) {
	for _, raw := range r.Header.Values("Origin") {
		origin, valid := normalOrigin(raw)
		if valid && g.origins[origin] {
			continue
		}
		if valid {
			scheme, host, _ := strings.Cut(origin, "://")
			if host == hostPort(scheme, r.Host) {
				continue
			}
		}
		return raw, false
	}
	return "", true
}

// check answers r with 403 and returns false when its Host or Origin is not
// allowed.
func (g guards) check(w http.ResponseWriter, r *http.Request) bool {
	if !g.hostAllowed(r) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not a name this server answers to (a guard against DNS rebinding); "+
			"reach it as localhost or by its address, or ask its operator to allow the name", r.Host), http.StatusForbidden)
		return false
	}
	if bad, ok := g.originAllowed(r); !ok {
		http.Error(w, fmt.Sprintf("Forbidden: Origin %q may not call this server: only its own pages and the origins its operator allowed may", bad), http.StatusForbidden)
		return false
	}
	return true
}

// reserveSession takes a place for the session a POST without a session ID
// opens, or answers 503 when the sessions open and being opened are at the
// cap. The release must be called once the request was served.
func (s *Server) reserveSession(w http.ResponseWriter) (release func(), ok bool) {
	s.sessMu.Lock()
	open := s.opening
	for ss := range s.srv.Sessions() {
		if ss.ID() != "" { // HTTP sessions have an ID; stdio sessions do not
			open++
		}
	}
	if open >= s.opts.maxSessions {
		s.sessMu.Unlock()
		http.Error(w, fmt.Sprintf("Service Unavailable: this server keeps at most %d sessions and has no room for another; "+
			"end a session you no longer use (DELETE with its Mcp-Session-Id) or try again later", s.opts.maxSessions), http.StatusServiceUnavailable)
		return nil, false
	}
	s.opening++
	s.sessMu.Unlock()
	return func() {
		s.sessMu.Lock()
		s.opening--
		s.sessMu.Unlock()
	}, true
}

// readBody reads the body of a POST within the body deadline and the byte cap
// and refuses a JSON-RPC batch; r's body is then the bytes read. It answers
// the request and returns false when the body is refused.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) bool {
	rc := http.NewResponseController(w)
	// The deadline covers the body only: it is lifted once the body is read,
	// and the call the body carries may run longer.
	deadline := rc.SetReadDeadline(time.Now().Add(s.opts.bodyTimeout)) == nil
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= s.opts.maxBody {
		buf.Grow(int(n))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.opts.maxBody))
	if deadline && err == nil {
		// Left in place after a failed read, so that the server does not
		// wait for the rest of a refused body either.
		_ = rc.SetReadDeadline(time.Time{})
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, fmt.Sprintf("Request Entity Too Large: the request body is over %d bytes, the most this server reads; send smaller arguments", s.opts.maxBody), http.StatusRequestEntityTooLarge)
		return false
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("Request Timeout: the request body did not arrive within %v; send the whole body at once", s.opts.bodyTimeout), http.StatusRequestTimeout)
		return false
	case err != nil:
		http.Error(w, fmt.Sprintf("Bad Request: reading the request body: %v", err), http.StatusBadRequest)
		return false
	}
	body := buf.Bytes()
	if first := bytes.TrimLeft(body, " \t\r\n"); len(first) > 0 && first[0] == '[' {
		// MCP 2025-06-18 removed JSON-RPC batching; the SDK still answers
		// batches of requests that name no protocol version, one response for
		// every message, which made a small request a huge answer.
		writeRPCError(w, http.StatusBadRequest, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "JSON-RPC batches are not accepted (MCP removed batching in 2025-06-18): send one message per request"})
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return true
}

// writeRPCError answers with a JSON-RPC error response without an ID.
func writeRPCError(w http.ResponseWriter, status int, e *jsonrpc.Error) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: e})
	if err != nil {
		http.Error(w, e.Message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

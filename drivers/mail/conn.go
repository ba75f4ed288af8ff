package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TLS modes of [Config].TLS and [Config].SMTPTLS.
const (
	TLSImplicit = "implicit" // TLS from the first byte (IMAP 993, SMTP 465)
	TLSStartTLS = "starttls" // plain connection upgraded with STARTTLS before anything else is sent
	TLSNone     = "none"     // no TLS: allowed only for a loopback address
)

// checkTLS validates a TLS mode for addr.
func checkTLS(what, mode, addr string) error {
	switch mode {
	case TLSImplicit, TLSStartTLS:
		return nil
	case TLSNone:
		if !isLoopback(addr) {
			return fmt.Errorf("mail: %s %q without TLS is refused: credentials and mail would cross the network in clear text; set TLS to %q or %q (TLS = %q is allowed only for a loopback address)", what, addr, TLSImplicit, TLSStartTLS, TLSNone)
		}
		return nil
	case "":
		return fmt.Errorf("mail: %s needs a TLS mode: %q, %q or %q (loopback only)", what, TLSImplicit, TLSStartTLS, TLSNone)
	}
	return fmt.Errorf("mail: %s TLS mode %q is unknown; use %q, %q or %q (loopback only)", what, mode, TLSImplicit, TLSStartTLS, TLSNone)
}

// isLoopback reports whether the host of addr is a loopback address or
// "localhost".
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tlsConfigFor returns a copy of base (or a new config) with ServerName set from
// addr when it is not set.
func tlsConfigFor(base *tls.Config, addr string) *tls.Config {
	var c *tls.Config
	if base != nil {
		c = base.Clone()
	} else {
		c = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.ServerName == "" {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			c.ServerName = host
		}
	}
	return c
}

// dial opens a TCP connection to addr within ctx, with implicit TLS when mode
// says so. The connection is wrapped in a budgetConn.
func dial(ctx context.Context, addr, mode string, base *tls.Config, timeout time.Duration) (*budgetConn, error) {
	d := &net.Dialer{Timeout: timeout}
	var c net.Conn
	var err error
	if mode == TLSImplicit {
		td := &tls.Dialer{NetDialer: d, Config: tlsConfigFor(base, addr)}
		c, err = td.DialContext(ctx, "tcp", addr)
	} else {
		c, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	return &budgetConn{Conn: c}, nil
}

// errBudget is the error a budgetConn returns once the server sent more than
// the operation allows.
var errBudget = errors.New("the server sent more data than the operation allows")

// budgetConn is a connection that stops reading once more than a budget of
// bytes arrived since the last reset: a server that answers a bounded request
// with an unbounded reply cannot make the driver hold it. It is safe for the
// one reader and one resetter the IMAP client and the driver are.
type budgetConn struct {
	net.Conn
	left atomic.Int64
	set  atomic.Bool
}

func (c *budgetConn) Read(p []byte) (int, error) {
	if c.set.Load() && c.left.Load() <= 0 {
		return 0, errBudget
	}
	n, err := c.Conn.Read(p)
	if c.set.Load() {
		c.left.Add(-int64(n))
	}
	return n, err
}

// reset allows n more bytes to be read.
func (c *budgetConn) reset(n int64) {
	c.left.Store(n)
	c.set.Store(true)
}

// rateLimiter allows at most n events per window, counted over a sliding
// window of the times of the last n events. Safe for concurrent use.
type rateLimiter struct {
	mu     sync.Mutex
	n      int
	window time.Duration
	times  []time.Time
	now    func() time.Time
}

// take records an event now and reports whether it is allowed; when it is not,
// wait says how long until the oldest event leaves the window.
func (r *rateLimiter) take() (ok bool, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	kept := r.times[:0]
	for _, t := range r.times {
		if now.Sub(t) < r.window {
			kept = append(kept, t)
		}
	}
	r.times = kept
	if len(r.times) >= r.n {
		return false, r.window - now.Sub(r.times[0])
	}
	r.times = append(r.times, now)
	return true, 0
}

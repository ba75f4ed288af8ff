// Package endpoint holds what the model adapters share about their endpoint: the
// base URL and the API key they take from their Config or the environment, the
// HTTP client that keeps the key on the configured origin, and the bounds of one
// request.
package endpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/mcs-go/mcs/internal/origin"
	"github.com/mcs-go/mcs/runner"
)

// Resolve returns the base URL to use: configured, else the environment variable
// env, else def. It fails, naming provider and showing example, when the URL is
// not an absolute http or https URL.
func Resolve(provider, configured, env, def, example string) (string, *url.URL, error) {
	endpoint := configured
	if endpoint == "" {
		endpoint = os.Getenv(env)
	}
	if endpoint == "" {
		endpoint = def
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, fmt.Errorf("%s: base URL %q is not an absolute http or https URL (such as %s)", provider, endpoint, example)
	}
	return endpoint, u, nil
}

// Key returns configured, else the environment variable env ("" when neither is set).
func Key(configured, env string) string {
	if configured != "" {
		return configured
	}
	return os.Getenv(env)
}

// Client returns a copy of c (nil: a client on http.DefaultTransport) that follows
// a redirect only within the origin of base: the same scheme, host and port. A
// redirect anywhere else (another port on the same host, https to http, another
// host) is not sent; the request fails with an error wrapping
// runner.ErrRedirectRefused that names the target's origin. This keeps the key,
// which the SDKs send in a header net/http copies to the same host whatever the
// port or scheme, on the configured origin. c's own redirect policy, if any, is
// asked after this check; a request follows at most 10 redirects.
func Client(c *http.Client, base *url.URL) *http.Client {
	cp := &http.Client{}
	if c != nil {
		*cp = *c
	}
	cp.CheckRedirect = origin.Redirects(base, cp.CheckRedirect,
		func(target, home *url.URL) error {
			return fmt.Errorf("%w: the endpoint redirected to %s, and the key goes only to %s", runner.ErrRedirectRefused, origin.String(target), origin.String(home))
		},
		func() error { return fmt.Errorf("stopped after %d redirects", origin.MaxRedirects) })
	return cp
}

// SameOrigin reports whether a and b have the same scheme, host and port (see
// [origin.Same]).
func SameOrigin(a, b *url.URL) bool { return origin.Same(a, b) }

// Origin returns scheme://host[:port] of u, without its user, path or query.
func Origin(u *url.URL) string { return origin.String(u) }

// Middleware is the shape of a request middleware of both SDKs.
type Middleware = func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error)

// errBodyTooLarge ends a response body read past its limit.
var errBodyTooLarge = errors.New("response body too large")

// Bound returns a context for one SDK request, derived from ctx, and a middleware
// to install on that request. The middleware ends the context (so that the SDK
// stops, without retrying, and the connection closes) when an attempt was
// redirected to another origin, and, when maxBody > 0, when the response body
// passes maxBody bytes. Cause returns what ended it: an error wrapping
// runner.ErrRedirectRefused or runner.ErrReplyTooLarge, or nil when the request
// ended otherwise. Call stop when the request is done.
func Bound(ctx context.Context, maxBody int64) (rctx context.Context, mw Middleware, cause func() error, stop func()) {
	rctx, cancel := context.WithCancelCause(ctx)
	mw = func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if err != nil && errors.Is(err, runner.ErrRedirectRefused) {
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err
			}
			cancel(err)
		}
		if res != nil && res.Body != nil && maxBody > 0 {
			res.Body = &limitedBody{rc: res.Body, left: maxBody, max: maxBody, cancel: cancel}
		}
		return res, err
	}
	cause = func() error {
		if rctx.Err() == nil || ctx.Err() != nil {
			return nil
		}
		if c := context.Cause(rctx); errors.Is(c, runner.ErrRedirectRefused) || errors.Is(c, runner.ErrReplyTooLarge) {
			return c
		}
		return nil
	}
	return rctx, mw, cause, func() { cancel(nil) }
}

// limitedBody fails a read past max bytes and ends the request's context.
type limitedBody struct {
	rc     io.ReadCloser
	left   int64
	max    int64
	cancel context.CancelCauseFunc
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.fail()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more tells a body of exactly max bytes from a longer one
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, b.fail()
	}
	return n, err
}

func (b *limitedBody) fail() error {
	err := fmt.Errorf("%w: the response body passed %d bytes", runner.ErrReplyTooLarge, b.max)
	b.cancel(err)
	return fmt.Errorf("%w: %w", errBodyTooLarge, err)
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// BodyLimit returns the most bytes of a whole (not streamed) response body an
// adapter reads for a reply limit of maxReply bytes (runner.Request.MaxReplyBytes):
// 4×maxReply + 1 MiB, which leaves room for the JSON envelope and for text the
// server escapes (\uXXXX); 0, for no limit, when maxReply is negative.
func BodyLimit(maxReply int) int64 {
	switch {
	case maxReply < 0:
		return 0
	case maxReply == 0:
		maxReply = runner.DefaultMaxReplyBytes
	}
	return 4*int64(maxReply) + 1<<20
}

// Refusal returns the kind and the detail of an error Client or Bound caused, or
// ok false for any other error.
//
//lint:ignore ST1008 kind is a sentinel that names the refusal, not an outcome
func Refusal(err error) (kind error, detail string, ok bool) {
	for _, k := range []error{runner.ErrRedirectRefused, runner.ErrReplyTooLarge} {
		if errors.Is(err, k) {
			var uerr *url.Error
			if errors.As(err, &uerr) {
				err = uerr.Err
			}
			return k, strings.TrimPrefix(err.Error(), k.Error()+": "), true
		}
	}
	return nil, "", false
}

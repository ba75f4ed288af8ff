// Package auth turns authentication challenges into in-band results the user can act
// on, and provides credential providers for drivers (static tokens, token stores,
// the OAuth 2.0 device authorization grant).
//
// A driver that needs a credential asks its [CredentialProvider]. When none is
// available the provider returns a *[Challenge] (for example "open this URL and
// enter this code"); the driver lets it travel up unchanged, and the [Middleware]
// installed on the driver turns it into a result the model can show the user:
//
//	{"auth_required": true, "message": "...", "url": "...", "code": "...", "scope": "github"}
package auth

import (
	"context"
	"errors"

	"github.com/mcs-go/mcs"
)

// Capability is the capability flag of the auth concern.
const Capability mcs.Capability = "auth"

// Challenge describes an authentication step the user must take before a tool can
// run. *Challenge implements error so that it can travel up from a credential
// provider through a driver; the auth Middleware turns it into an in-band result.
type Challenge struct {
	// Message tells the user what to do.
	Message string
	// URL is where the user authenticates, if any.
	URL string
	// Code is the code the user enters there, if any.
	Code string
	// Scope is the MCS scope (a key such as "github") the credential is for.
	Scope string
}

// Error returns the challenge message, or a generic text naming the scope.
func (c *Challenge) Error() string {
	if c.Message != "" {
		return "authentication required: " + c.Message
	}
	if c.Scope != "" {
		return "authentication required for " + c.Scope
	}
	return "authentication required"
}

// Result returns the in-band result of the challenge:
// {"auth_required": true, "message", "url", "code", "scope"} with empty fields left out.
func (c *Challenge) Result() map[string]any {
	out := map[string]any{"auth_required": true}
	if c.Message != "" {
		out["message"] = c.Message
	}
	if c.URL != "" {
		out["url"] = c.URL
	}
	if c.Code != "" {
		out["code"] = c.Code
	}
	if c.Scope != "" {
		out["scope"] = c.Scope
	}
	return out
}

// CredentialProvider supplies credentials to drivers. scope is the MCS scope, a key
// such as "github" (for the REST driver, the name of the security scheme).
// Implementations must be safe for concurrent use. When no credential is available
// they return an error wrapping ErrNoCredential, or a *Challenge describing how the
// user can provide one.
type CredentialProvider interface {
	Token(ctx context.Context, scope string) (string, error)
}

// ErrNoCredential is wrapped by the error of a provider that has no credential for a
// scope and no way to obtain one.
var ErrNoCredential = errors.New("no credential")

// Middleware turns a *Challenge returned anywhere below it (also wrapped) into the
// in-band result of Challenge.Result. Other errors and results pass through
// unchanged. It has no state and is safe for concurrent use.
type Middleware struct{}

var _ mcs.ToolMiddleware = (*Middleware)(nil)

// New returns the auth middleware.
func New() *Middleware { return &Middleware{} }

// OnExecuteTool calls next and converts a *Challenge error into its result.
func (m *Middleware) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	res, err := next(ctx, name, args)
	if err != nil {
		var ch *Challenge
		if errors.As(err, &ch) {
			return ch.Result(), nil
		}
	}
	return res, err
}

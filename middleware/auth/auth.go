// Package auth turns authentication challenges into in-band results the user can act
// on, and provides credential providers for drivers (static tokens, token stores,
// the OAuth 2.0 device authorization grant, the authorization code grant with
// PKCE).
//
// A driver that needs a credential asks its [CredentialProvider]. When none is
// available the provider returns a *[Challenge] (for example "open this URL and
// enter this code"); the driver lets it travel up unchanged, and the [Middleware]
// installed on the driver turns it into a result the model can show the user, an
// [mcs.Signal] of kind [mcs.CodeChallenge] that the model reads as
//
//	{"auth_required": true, "code": "...", "message": "...", "scope": "github", "url": "..."}
//
// The providers:
//
//   - [NewStaticProvider]: tokens given by the operator, in a map or in the
//     environment variables MCS_TOKEN_<SCOPE>.
//   - [NewDeviceFlowProvider]: the OAuth 2.0 device authorization grant (RFC 8628).
//     The first call returns a challenge without blocking; later calls poll once;
//     tokens are kept in a [TokenStore] ([NewMemoryStore], [NewFileStore]) and
//     refreshed.
//   - [NewAuthCodeProvider]: the authorization code grant with PKCE (RFC 6749,
//     RFC 7636) through the browser and a one-shot loopback redirect (RFC 8252).
//     The first call returns the sign-in link as a challenge; the token is
//     stored, refreshed before it expires, and a refused refresh token starts a
//     new sign-in. [SignIn] waits for a sign-in outside a conversation.
//
// Token stores are opened by URL with [OpenStore]: "sqlite:PATH" (package
// auth/sqlite), "postgres://..." (auth/postgres), "redis://..." (auth/redis),
// "memory:" or a file path. The database stores implement [TokenLocker], so
// that processes and machines sharing one refresh an expiring token once.
// [WithEncryptionKey] (or [Seal]) seals every value with AES-256-GCM; a wrong
// key is a *[KeyError], never a new sign-in.
//
// Credentials stay inside the driver: no provider, store or the middleware puts a
// token into a result, an error or a log record.
//
// In a middleware list the auth middleware belongs innermost of the three concerns:
// [hooks, permission, auth], so that consent is asked before a credential is used
// and hooks see the in-band challenge as the call's result.
//
// # The contract
//
// The auth concern has a contract, [SupportsAuth], and a capability flag,
// [Capability]. The [Middleware] is one implementation of the contract; a driver
// author may build the concern into a driver instead: the driver implements
// SupportsAuth (the marker method HandlesAuthChallenges) and declares Capability in its Meta, and a client finds
// it with a type assertion. A driver that only has the Middleware configured
// implements neither and does not list the flag: which middleware runs is
// configuration the client applied, not a property of the driver, and the client
// that built the Middleware holds it.
package auth

import (
	"context"
	"errors"

	"github.com/mcs-go/mcs"
)

// Capability is the capability flag of the auth concern, whose contract is
// [SupportsAuth].
const Capability mcs.Capability = "auth"

// SupportsAuth is the contract of the auth concern. An implementation answers a
// tool call that meets an authentication challenge (a *[Challenge] in the error's
// tree) in band: the call succeeds with a result that tells the user what to do,
// instead of failing. HandlesAuthChallenges is a marker: it does nothing, and a
// type declares with it that it keeps that promise. [Middleware] implements it. A
// driver may build the concern in instead, and then also declares [Capability] in
// its Meta; a driver that merely has the middleware configured does neither (see
// the package documentation).
type SupportsAuth interface {
	HandlesAuthChallenges()
}

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

// Error returns "authentication required: " followed by the message, or a generic
// text naming the scope. A nil *Challenge reports "authentication required".
func (c *Challenge) Error() string {
	if c == nil {
		return "authentication required"
	}
	if c.Message != "" {
		return "authentication required: " + c.Message
	}
	if c.Scope != "" {
		return "authentication required for " + c.Scope
	}
	return "authentication required"
}

// Result returns the in-band result of the challenge: an [mcs.Signal] of kind
// [mcs.CodeChallenge] with the message, and the url, code and scope as Data, each
// left out when empty, a new one on each call. The model reads it as
// {"auth_required": true, "code", "message", "scope", "url"}. A nil *Challenge
// gives {"auth_required": true}.
func (c *Challenge) Result() mcs.Signal {
	s := mcs.Signal{Kind: mcs.CodeChallenge}
	if c == nil {
		return s
	}
	s.Message = c.Message
	for _, kv := range [...][2]string{{"url", c.URL}, {"code", c.Code}, {"scope", c.Scope}} {
		if kv[1] != "" {
			if s.Data == nil {
				s.Data = make(map[string]any, 3)
			}
			s.Data[kv[0]] = kv[1]
		}
	}
	return s
}

// Unwrap returns an error whose [mcs.Coder] reports [mcs.CodeChallenge], so that
// mcs.CodeOf tells a challenge, also wrapped, from other errors. (A Code method of
// its own is not possible: Code is the user's code.)
func (c *Challenge) Unwrap() error { return challengeCode{} }

// challengeCode marks a *Challenge for [mcs.CodeOf].
type challengeCode struct{}

func (challengeCode) Error() string  { return "authentication required" }
func (challengeCode) Code() mcs.Code { return mcs.CodeChallenge }

// CredentialProvider supplies credentials to drivers. scope is the MCS scope, a key
// such as "github" (for the REST driver, the name of the security scheme).
// Implementations must be safe for concurrent use. When no credential is available
// they return an error wrapping ErrNoCredential, or a *Challenge describing how the
// user can provide one.
type CredentialProvider interface {
	Token(ctx context.Context, scope string) (string, error)
}

// CredentialProviderFunc adapts an ordinary function to [CredentialProvider]. The
// function must be safe for concurrent use.
type CredentialProviderFunc func(ctx context.Context, scope string) (string, error)

// Token calls f(ctx, scope).
func (f CredentialProviderFunc) Token(ctx context.Context, scope string) (string, error) {
	return f(ctx, scope)
}

var _ CredentialProvider = CredentialProviderFunc(nil)

// ErrNoCredential is wrapped by the error of a provider that has no credential for a
// scope and no way to obtain one.
var ErrNoCredential = errors.New("no credential")

// Middleware is the auth concern as an [mcs.ToolMiddleware]: it turns a *Challenge
// returned anywhere below it (also wrapped, see [errors.As]) into the in-band result
// of [Challenge.Result], a success for the driver, so that the model can tell the
// user what to do. Other errors and all results pass through unchanged; the
// arguments are passed on untouched. It never changes a driver's Meta.
//
// Middleware has no state: one instance may serve any number of drivers and is safe
// for concurrent use. The zero value is ready to use.
type Middleware struct {
	config
}

var (
	_ mcs.ToolMiddleware = (*Middleware)(nil)
	_ SupportsAuth       = (*Middleware)(nil)
)

// HandlesAuthChallenges marks Middleware as an implementation of [SupportsAuth]; it
// does nothing.
func (*Middleware) HandlesAuthChallenges() {}

// Option configures a [Middleware] built by [New]. The package defines no options
// yet; New takes them so that its shape is that of the other middleware packages'
// constructors and stays the same when one is added.
type Option func(*config)

// config is what the options of [New] set; nothing yet.
type config struct{}

// New returns the auth middleware configured by opts; nil options are ignored.
func New(opts ...Option) *Middleware {
	m := &Middleware{}
	for _, o := range opts {
		if o != nil {
			o(&m.config)
		}
	}
	return m
}

// OnExecuteTool calls next and, when next fails with an error that holds a
// *Challenge, returns the challenge's result and a nil error instead. The first
// *Challenge in the error's tree wins.
func (m *Middleware) OnExecuteTool(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
	res, err := next(ctx, name, args)
	if err != nil {
		if ch, ok := errors.AsType[*Challenge](err); ok {
			return ch.Result(), nil
		}
	}
	return res, err
}

// Package signins is what mcs auth and the web console's Auth page share of
// the sign-ins of a stack: the status of each credential scope of the drivers
// that sign in, and signing out. It never returns a token.
package signins

import (
	"context"
	"fmt"
	"time"

	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/stack"
)

// Row is the status of one credential scope of a driver that signs in, or,
// with an empty Scope, the error of a driver whose provider could not be had.
type Row struct {
	// Label, Mode and Store are the driver's ([stack.SignIn]); Store has any
	// password hidden.
	Label, Mode, Store string
	// Scope is the credential scope; "" when Err is the driver's.
	Scope string
	// Token is what the token store holds for the scope, without any secret.
	Token auth.TokenStatus
	// Err is why the status could not be read (a store that is down, a wrong
	// encryption key); Token then holds only the scope.
	Err error
}

// statuser is a provider that reports a scope's status:
// *auth.AuthCodeProvider, *auth.DeviceFlowProvider, *mcp.OAuthHandler.
type statuser interface {
	Status(ctx context.Context, scope string) (auth.TokenStatus, error)
}

// Status returns the rows of the drivers of st that sign in, in file order and
// each driver's scopes in [stack.SignIn] order: one row per scope, or one row
// with the error when the driver's provider cannot be had (its token store
// cannot be opened). A provider that cannot report a status gives no row. It
// opens the token stores the first time (see [stack.Stack.CredentialProvider])
// and reads each scope's entry; an OAuth-protected MCP server may be asked for
// its metadata. It honours ctx.
func Status(ctx context.Context, st *stack.Stack) []Row {
	var out []Row
	for _, in := range st.SignIns() {
		base := Row{Label: in.Label, Mode: in.Mode, Store: in.Store}
		p, err := st.CredentialProvider(ctx, in.Label)
		if err != nil {
			base.Err = err
			out = append(out, base)
			continue
		}
		sp, ok := p.(statuser)
		if !ok {
			continue
		}
		for _, scope := range in.Scopes {
			r := base
			r.Scope = scope
			r.Token, r.Err = sp.Status(ctx, scope)
			if r.Err != nil {
				r.Token = auth.TokenStatus{Scope: scope}
			}
			out = append(out, r)
		}
	}
	return out
}

// State says what the store holds for the scope: "not signed in", "signed
// in", "expired" or "expired, refreshable".
func (r Row) State() string {
	s := r.Token
	switch {
	case !s.SignedIn:
		return "not signed in"
	case s.Expired && s.Refreshable:
		return "expired, refreshable"
	case s.Expired:
		return "expired"
	}
	return "signed in"
}

// Expires says when the access token expires, formatted by format: "-" when
// not signed in, "never" when the server gave no expiry.
func (r Row) Expires(format func(time.Time) string) string {
	switch {
	case !r.Token.SignedIn:
		return "-"
	case r.Token.Expiry.IsZero():
		return "never"
	}
	return format(r.Token.Expiry)
}

// NeedsSignIn reports whether a call of the scope would have to sign in: no
// token, or an expired one that cannot be refreshed.
func (r Row) NeedsSignIn() bool {
	return r.Err == nil && (!r.Token.SignedIn || r.Token.Expired && !r.Token.Refreshable)
}

// forgetter is a provider that signs out.
type forgetter interface {
	Forget(ctx context.Context, scope string) error
}

// SignOut signs the driver in out of every scope, as mcs auth logout does: it
// removes their tokens from the token store (every process sharing the store
// sees it at its next call) and ends a pending sign-in. The authorization
// server is not told. It stops at the first scope that fails, saying which.
func SignOut(ctx context.Context, st *stack.Stack, in stack.SignIn) error {
	p, err := st.CredentialProvider(ctx, in.Label)
	if err != nil {
		return err
	}
	f, ok := p.(forgetter)
	if !ok {
		return fmt.Errorf("the provider of %s cannot sign out", in.Label)
	}
	for _, scope := range in.Scopes {
		if err := f.Forget(ctx, scope); err != nil {
			return fmt.Errorf("sign out for %s: %w", scope, err)
		}
	}
	return nil
}

// Find returns the sign-in of the driver labelled label.
func Find(st *stack.Stack, label string) (stack.SignIn, bool) {
	for _, in := range st.SignIns() {
		if in.Label == label {
			return in, true
		}
	}
	return stack.SignIn{}, false
}

// ByScope returns the sign-in of the driver whose credential scopes hold
// scope; the first in file order.
func ByScope(st *stack.Stack, scope string) (stack.SignIn, bool) {
	for _, in := range st.SignIns() {
		for _, sc := range in.Scopes {
			if sc == scope {
				return in, true
			}
		}
	}
	return stack.SignIn{}, false
}

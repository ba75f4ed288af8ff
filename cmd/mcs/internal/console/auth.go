package console

import (
	"context"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/stack"
)

// SignIn is a sign-in that waits for the user: the link to open and the code
// to enter there, from an authentication challenge ([auth.Challenge]).
type SignIn struct {
	Scope   string
	Message string
	URL     string
	Code    string
	Seen    time.Time
}

// TokenStatus is what is known of the credential of one scope, never the
// credential itself.
type TokenStatus struct {
	// Scope is the credential's scope, such as a REST driver's label.
	Scope string
	// Source says where the credential comes from: "env MCS_TOKEN_PETS",
	// "device flow".
	Source string
	// Status is "set", "not set", or what the source can tell ("signs in when
	// a call needs it").
	Status string
	// OK says the credential is there.
	OK bool
}

// AuthSource feeds the Auth page: the sign-ins that wait for the user and the
// status of each scope's token. Implementations must never return a secret
// and must be safe for concurrent use.
type AuthSource interface {
	SignIns(ctx context.Context) []SignIn
	Tokens(ctx context.Context) []TokenStatus
}

// StackAuth is the AuthSource of a stack's declared credentials (its
// [stack.Effect]s of kind credential): for credentials = "env" whether each
// variable is set, for the OAuth flows that the user signs in when a call needs
// it. It knows no sign-ins of its own: the console adds the challenges its
// calls met.
func StackAuth(st *stack.Stack) AuthSource { return stackAuth{st} }

type stackAuth struct{ st *stack.Stack }

func (stackAuth) SignIns(context.Context) []SignIn { return nil }

func (a stackAuth) Tokens(context.Context) []TokenStatus {
	if a.st == nil {
		return nil
	}
	var out []TokenStatus
	for _, e := range a.st.Effects() {
		if e.Kind != stack.EffectCredential {
			continue
		}
		scope := strings.Trim(strings.TrimPrefix(e.Table, "[[driver]] "), `"`)
		if len(e.Env) == 0 {
			out = append(out, TokenStatus{Scope: scope, Source: e.Path, Status: "signs in when a call needs it (see the sign-ins above)"})
			continue
		}
		for _, name := range e.Env {
			ts := TokenStatus{Scope: scope, Source: "env " + name, Status: "not set"}
			if v, ok := os.LookupEnv(name); ok && v != "" {
				ts.Status, ts.OK = "set", true
			}
			out = append(out, ts)
		}
	}
	return out
}

// noteChallenge keeps the sign-in of an authentication challenge a call met,
// replacing an earlier one of the same scope, and tells the pages.
func (s *Server) noteChallenge(res any) {
	var sig mcs.Signal
	switch r := res.(type) {
	case mcs.Signal:
		sig = r
	case *mcs.Signal:
		if r == nil {
			return
		}
		sig = *r
	default:
		return
	}
	str := func(k string) string { v, _ := sig.Data[k].(string); return v }
	in := SignIn{Scope: str("scope"), Message: s.red.Text(sig.Message, nil), URL: str("url"), Code: str("code"), Seen: time.Now()}
	if !strings.HasPrefix(in.URL, "https://") && !strings.HasPrefix(in.URL, "http://") {
		in.URL = ""
	}
	s.mu.Lock()
	s.signIns = slices.DeleteFunc(s.signIns, func(x SignIn) bool { return x.Scope == in.Scope })
	s.signIns = append(s.signIns, in)
	s.mu.Unlock()
	s.hub.publish("auth", nil)
}

package console

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/cmd/mcs/internal/signins"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/stack"
)

// SignIn is a sign-in that waits for the user: the link to open and the code
// to enter there, from an authentication challenge ([auth.Challenge]). The
// link is the authorization URL (its state and code challenge are no
// secrets; the verifier never leaves the provider).
type SignIn struct {
	// Label is the driver that signs in; "" when the scope is no stack
	// driver's (a challenge a call met).
	Label   string
	Scope   string
	Message string
	URL     string
	Code    string
	Seen    time.Time
}

// TokenStatus is what is known of a credential that is not signed in for,
// such as an environment variable, never the credential itself.
type TokenStatus struct {
	// Scope is the credential's scope, such as a REST driver's label.
	Scope string
	// Source says where the credential comes from: "env MCS_TOKEN_PETS".
	Source string
	// Status is "set" or "not set".
	Status string
	// OK says the credential is there.
	OK bool
}

// signInLimit bounds a sign-in the console follows; the authorization code
// flow ends its own sooner (auth.DefaultSignInTimeout), and a device code
// expires sooner too.
const signInLimit = 15 * time.Minute

// statusTimeout bounds reading the token status of the Auth page.
const statusTimeout = 10 * time.Second

// follower follows one sign-in in the background.
type follower struct{ cancel context.CancelFunc }

// outcome is how the last sign-in of a scope ended, or that it was signed out.
type outcome struct {
	At   time.Time
	Text string
	OK   bool
}

// followed is what a followed sign-in reports first: a challenge to show,
// its end, or that it was being followed already.
type followed struct {
	signIn *SignIn
	done   bool
	err    error
	joined bool
}

// follow signs in for scope of the driver in, in the background, as mcs auth
// login does ([auth.SignIn]): each challenge is kept for the Auth page, and
// when the sign-in ends (signed in, refused, timed out) its outcome is kept
// and the pages are told ("auth" event). A scope followed already is joined.
// The channel gets the first report.
func (s *Server) follow(st *stack.Stack, in stack.SignIn, scope string) <-chan followed {
	first := make(chan followed, 1)
	s.mu.Lock()
	if s.followers[scope] != nil {
		f := followed{joined: true}
		if i := slices.IndexFunc(s.signIns, func(x SignIn) bool { return x.Scope == scope }); i >= 0 {
			sg := s.signIns[i]
			f.signIn = &sg
		}
		s.mu.Unlock()
		first <- f
		return first
	}
	ctx, cancel := context.WithTimeout(s.ctx, signInLimit)
	fw := &follower{cancel: cancel}
	s.followers[scope] = fw
	s.mu.Unlock()
	send := func(f followed) {
		select {
		case first <- f:
		default:
		}
	}
	go func() {
		defer cancel()
		p, err := st.CredentialProvider(ctx, in.Label)
		if err == nil {
			err = auth.SignIn(ctx, p, scope, func(ch *auth.Challenge) {
				sg := s.keepSignIn(SignIn{Label: in.Label, Scope: scope, Message: ch.Message, URL: ch.URL, Code: ch.Code})
				send(followed{signIn: &sg})
			})
		}
		s.endFollow(scope, fw, err)
		send(followed{done: true, err: err})
	}()
	return first
}

// endFollow keeps the outcome of the sign-in fw followed, unless the scope
// was signed out meanwhile, and tells the pages.
func (s *Server) endFollow(scope string, fw *follower, err error) {
	s.mu.Lock()
	if s.followers[scope] != fw {
		s.mu.Unlock()
		return
	}
	delete(s.followers, scope)
	s.signIns = slices.DeleteFunc(s.signIns, func(x SignIn) bool { return x.Scope == scope })
	o := outcome{At: time.Now(), Text: "signed in", OK: true}
	if err != nil {
		o = outcome{At: time.Now(), Text: "the sign-in did not complete: " + s.red.Text(err.Error(), nil)}
	}
	s.outcomes[scope] = o
	s.mu.Unlock()
	s.hub.publish("auth", nil)
}

// keepSignIn keeps sg (its message redacted, a link that is not http(s)
// dropped), replacing an earlier one of the same scope, tells the pages, and
// returns it as kept.
func (s *Server) keepSignIn(sg SignIn) SignIn {
	sg.Message = s.red.Text(sg.Message, nil)
	sg.Seen = time.Now()
	if !strings.HasPrefix(sg.URL, "https://") && !strings.HasPrefix(sg.URL, "http://") {
		sg.URL = ""
	}
	s.mu.Lock()
	s.signIns = slices.DeleteFunc(s.signIns, func(x SignIn) bool { return x.Scope == sg.Scope })
	s.signIns = append(s.signIns, sg)
	s.mu.Unlock()
	s.hub.publish("auth", nil)
	return sg
}

// noteChallenge keeps the sign-in of an authentication challenge a call met
// and, when the scope is a stack driver's that signs in, follows it so that
// the page learns when it completes.
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
	sg := SignIn{Scope: str("scope"), Message: sig.Message, URL: str("url"), Code: str("code")}
	s.mu.Lock()
	st := s.st
	s.mu.Unlock()
	var in stack.SignIn
	ok := false
	if st != nil && sg.Scope != "" {
		in, ok = signins.ByScope(st, sg.Scope)
		sg.Label = in.Label
	}
	s.keepSignIn(sg)
	if ok {
		s.follow(st, in, sg.Scope)
	}
}

// authPage is the Auth page: the drivers that sign in, the sign-ins that wait
// and no driver of the stack follows, and the other credentials.
type authPage struct {
	Drivers     []driverView
	Waiting     []SignIn
	Credentials []TokenStatus
}

// driverView is a driver that signs in, with its scopes as mcs auth status
// lists them.
type driverView struct {
	Label, Mode, Store string
	Error              string
	Scopes             []scopeView
}

type scopeView struct {
	Scope, State, OAuthScopes, Expires string
	OK, CanSignIn                      bool
	Error                              string
	Pending                            *SignIn
	Outcome                            *outcome
}

func (s *Server) authData(r *http.Request, _ mcs.Driver) any {
	s.mu.Lock()
	st := s.st
	waiting := slices.Clone(s.signIns)
	outcomes := make(map[string]outcome, len(s.outcomes))
	for k, v := range s.outcomes {
		outcomes[k] = v
	}
	s.mu.Unlock()
	out := authPage{}
	if st == nil {
		out.Waiting = waiting
		return out
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), statusTimeout)
	defer cancel()
	for _, row := range signins.Status(ctx, st) {
		if len(out.Drivers) == 0 || out.Drivers[len(out.Drivers)-1].Label != row.Label {
			out.Drivers = append(out.Drivers, driverView{Label: row.Label, Mode: row.Mode, Store: row.Store})
		}
		dv := &out.Drivers[len(out.Drivers)-1]
		if row.Scope == "" {
			dv.Error = s.red.Text(row.Err.Error(), nil)
			continue
		}
		sv := scopeView{Scope: row.Scope, State: row.State(), OAuthScopes: strings.Join(row.Token.Scopes, " "),
			Expires: row.Expires(when), OK: row.State() == "signed in", CanSignIn: row.NeedsSignIn()}
		if row.Err != nil {
			sv.State, sv.Error = "unknown", s.red.Text(row.Err.Error(), nil)
		}
		if i := slices.IndexFunc(waiting, func(x SignIn) bool { return x.Scope == row.Scope }); i >= 0 {
			sg := waiting[i]
			sv.Pending = &sg
			sv.CanSignIn = false
			waiting = slices.Delete(waiting, i, i+1)
		}
		if o, ok := outcomes[row.Scope]; ok {
			sv.Outcome = &o
		}
		dv.Scopes = append(dv.Scopes, sv)
	}
	out.Waiting = waiting
	out.Credentials = credentials(st)
	return out
}

// credentials lists the stack's declared credentials that no sign-in
// provides (credentials = "env"): whether each variable is set.
func credentials(st *stack.Stack) []TokenStatus {
	var out []TokenStatus
	for _, e := range st.Effects() {
		if e.Kind != stack.EffectCredential {
			continue
		}
		scope := strings.Trim(strings.TrimPrefix(e.Table, "[[driver]] "), `"`)
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

type signInRequest struct {
	Label string `json:"label"`
	Scope string `json:"scope"`
}

// signInWait is how long a sign-in request waits for the provider's first
// challenge before it answers that the sign-in is starting.
var signInWait = 30 * time.Second

// apiSignIn starts the sign-in of a scope of a driver (the label's first
// scope when none is named), as mcs auth login does, and answers with the
// link to open (and the code to enter) as soon as the provider gives it. The
// authorization code flow's loopback listener runs in this process, so the
// link works from a browser on this computer.
func (s *Server) apiSignIn(w http.ResponseWriter, r *http.Request) {
	var req signInRequest
	if !readJSON(w, r, &req) {
		return
	}
	st, in, ok := s.signInOf(w, req.Label)
	if !ok {
		return
	}
	scope := req.Scope
	if scope == "" {
		scope = in.Scopes[0]
	}
	if !slices.Contains(in.Scopes, scope) {
		writeJSONStatus(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("driver %s has no credential scope %q; its scopes: %s", in.Label, scope, strings.Join(in.Scopes, ", "))})
		return
	}
	t := time.NewTimer(signInWait)
	defer t.Stop()
	select {
	case f := <-s.follow(st, in, scope):
		switch {
		case f.signIn != nil:
			writeJSON(w, map[string]string{"ok": "waiting", "url": f.signIn.URL, "code": f.signIn.Code})
		case f.joined:
			writeJSON(w, map[string]string{"ok": "waiting"})
		case f.err != nil:
			writeJSONStatus(w, http.StatusBadGateway, map[string]string{"error": "sign in for " + scope + ": " + s.red.Text(f.err.Error(), nil)})
		default:
			writeJSON(w, map[string]string{"ok": "signed in"})
		}
	case <-t.C:
		writeJSON(w, map[string]string{"ok": "starting"})
	case <-r.Context().Done():
	}
}

type signOutRequest struct {
	Label string `json:"label"`
}

// apiSignOut signs a driver out of every scope, as mcs auth logout does, and
// stops the sign-ins of its scopes the console follows.
func (s *Server) apiSignOut(w http.ResponseWriter, r *http.Request) {
	var req signOutRequest
	if !readJSON(w, r, &req) {
		return
	}
	st, in, ok := s.signInOf(w, req.Label)
	if !ok {
		return
	}
	s.mu.Lock()
	for _, scope := range in.Scopes {
		if fw := s.followers[scope]; fw != nil {
			fw.cancel()
			delete(s.followers, scope)
		}
	}
	s.signIns = slices.DeleteFunc(s.signIns, func(x SignIn) bool { return slices.Contains(in.Scopes, x.Scope) })
	s.mu.Unlock()
	err := signins.SignOut(r.Context(), st, in)
	s.mu.Lock()
	for _, scope := range in.Scopes {
		if err == nil {
			s.outcomes[scope] = outcome{At: time.Now(), Text: "signed out"}
		} else {
			delete(s.outcomes, scope)
		}
	}
	s.mu.Unlock()
	s.hub.publish("auth", nil)
	if err != nil {
		writeJSONStatus(w, http.StatusConflict, map[string]string{"error": s.red.Text(err.Error(), nil)})
		return
	}
	writeJSON(w, map[string]string{"ok": "signed out"})
}

// signInOf returns the attached stack and the sign-in of the driver labelled
// label, or answers why not.
func (s *Server) signInOf(w http.ResponseWriter, label string) (*stack.Stack, stack.SignIn, bool) {
	s.mu.Lock()
	st := s.st
	s.mu.Unlock()
	if st == nil {
		writeJSONStatus(w, http.StatusConflict, map[string]string{"error": "no stack is loaded"})
		return nil, stack.SignIn{}, false
	}
	in, ok := signins.Find(st, label)
	if !ok {
		writeJSONStatus(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no driver labelled %q signs in", label)})
		return nil, stack.SignIn{}, false
	}
	if len(in.Scopes) == 0 {
		writeJSONStatus(w, http.StatusConflict, map[string]string{"error": "driver " + in.Label + " has no credential scope"})
		return nil, stack.SignIn{}, false
	}
	return st, in, true
}

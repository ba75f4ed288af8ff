package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/cmd/mcs/internal/calls"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/permission"
)

// Outcome is what a run shows: Kind is "result", "error", "invalid" (the
// arguments were refused before the tool ran), "not-run" (consent refused),
// or the code of an in-band signal ("denied", "challenge", "pending"). Text
// is redacted.
type Outcome struct {
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	Text     string `json:"text"`
	Approval string `json:"approval,omitempty"`
}

type runRequest struct {
	Tool   string            `json:"tool"`
	Fields map[string]string `json:"fields"`
}

// apiRun runs one tool through the whole stack with the arguments of its form:
// each field is read as mcs call reads key=value (the same conversions and
// messages), empty fields are left out.
func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	var req runRequest
	if !readJSON(w, r, &req) {
		return
	}
	_, d, err := s.state()
	if err != nil {
		writeJSON(w, Outcome{Kind: "error", Title: "The stack is not built", Text: s.red.Text(err.Error(), nil)})
		return
	}
	td, ok := d.(mcs.ToolDriver)
	if !ok {
		writeJSON(w, Outcome{Kind: "error", Title: "No tools", Text: "the stack's driver does not list its tools"})
		return
	}
	ctx := mcs.ContextWithHiddenTools(r.Context())
	tools, err := td.ListTools(ctx)
	if err != nil {
		writeJSON(w, Outcome{Kind: "error", Title: "The tools could not be listed", Text: s.red.Text(err.Error(), nil)})
		return
	}
	i := slices.IndexFunc(tools, func(t mcs.Tool) bool { return t.Name == req.Tool })
	if i < 0 {
		writeJSON(w, Outcome{Kind: "invalid", Title: "No such tool", Text: fmt.Sprintf("no tool is called %q; reload the page to list them", req.Tool)})
		return
	}
	t := tools[i]
	args := map[string]any{}
	var problems []string
	for name, text := range req.Fields {
		if strings.TrimSpace(text) == "" {
			continue
		}
		p, ok := paramOf(t, name)
		if !ok {
			problems = append(problems, fmt.Sprintf("tool %s has no parameter %q", t.Name, name))
			continue
		}
		v, err := calls.Coerce(p, text)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		args[name] = v
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		writeJSON(w, Outcome{Kind: "invalid", Title: "Not run", Text: s.red.Text(strings.Join(problems, "\n"), nil)})
		return
	}
	res, err := td.ExecuteTool(r.Context(), t.Name, args)
	writeJSON(w, s.outcome(t.Name, args, res, err))
}

func paramOf(t mcs.Tool, name string) (mcs.Parameter, bool) {
	for _, p := range t.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return mcs.Parameter{}, false
}

// outcome classifies the result of a call as mcs call does, redacted.
func (s *Server) outcome(name string, args map[string]any, res any, err error) Outcome {
	_, known := s.red.Args(args)
	if err != nil {
		var ce *permission.ConsentError
		var ae *mcs.ArgumentsError
		if ch, ok := errors.AsType[*auth.Challenge](err); ok {
			// A driver that signs in without the auth middleware gives the
			// challenge as its error: the same sign-in, shown the same way.
			sig := ch.Result()
			s.noteChallenge(sig)
			return Outcome{Kind: "challenge", Title: name + " needs authentication: see the Auth page", Text: calls.Pretty(s.redactValue(sig, known))}
		}
		switch {
		case errors.As(err, &ce):
			return Outcome{Kind: "not-run", Title: name + " was not run", Text: s.red.Text(err.Error(), known)}
		case errors.As(err, &ae) && len(ae.Problems) > 0:
			return Outcome{Kind: "invalid", Title: "Invalid arguments", Text: s.red.Text(calls.InvalidArguments(name, ae.Problems), known)}
		}
		return Outcome{Kind: "error", Title: name + " failed", Text: s.red.Text(err.Error(), known)}
	}
	text := calls.Pretty(s.redactValue(res, known))
	switch code := mcs.CodeOf(res, nil); code {
	case mcs.CodeDenied:
		return Outcome{Kind: "denied", Title: name + " was denied", Text: text, Approval: calls.PendingID(res)}
	case mcs.CodeChallenge:
		s.noteChallenge(res)
		return Outcome{Kind: "challenge", Title: name + " needs authentication: see the Auth page", Text: text}
	case mcs.CodePending:
		id := calls.PendingID(res)
		return Outcome{Kind: "pending", Title: name + " waits for approval " + id + ": decide it on the Approvals page", Text: text, Approval: id}
	}
	return Outcome{Kind: "result", Title: name + " succeeded", Text: text}
}

// redactValue returns v as plain JSON values (a string holding JSON decoded),
// redacted as the audit log redacts arguments, with the secrets known from the
// call's arguments removed from strings.
func (s *Server) redactValue(v any, known []string) any {
	if str, ok := v.(string); ok {
		t := strings.TrimSpace(str)
		if (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
			var x any
			if json.Unmarshal([]byte(t), &x) == nil {
				return s.redactPlain(x, known)
			}
		}
		return s.red.Text(str, known)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s.red.Text(fmt.Sprint(v), known)
	}
	var x any
	if json.Unmarshal(b, &x) != nil {
		return s.red.Text(string(b), known)
	}
	return s.redactPlain(x, known)
}

func (s *Server) redactPlain(x any, known []string) any {
	v := s.red.Value(x)
	return scrubStrings(v, func(str string) string { return s.red.Text(str, known) })
}

// scrubStrings applies f to every string of v, keys left alone.
func scrubStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = scrubStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scrubStrings(e, f)
		}
		return out
	}
	return v
}

type processRequest struct {
	Reply string `json:"reply"`
}

// processAnswer is the Process page's view of a processed reply.
type processAnswer struct {
	Error    string       `json:"error,omitempty"`
	Calls    []processRow `json:"calls"`
	Response string       `json:"response"`
}

type processRow struct {
	Name    string `json:"name"`
	ID      string `json:"id,omitempty"`
	Owned   bool   `json:"owned"`
	Outcome string `json:"outcome"`
}

// apiProcess processes a pasted model reply as mcs process does.
func (s *Server) apiProcess(w http.ResponseWriter, r *http.Request) {
	var req processRequest
	if !readJSON(w, r, &req) {
		return
	}
	_, d, err := s.state()
	if err != nil {
		writeJSON(w, processAnswer{Error: s.red.Text(err.Error(), nil), Calls: []processRow{}})
		return
	}
	if len(req.Reply) > calls.MaxReplyBytes {
		writeJSON(w, processAnswer{Error: fmt.Sprintf("the reply is larger than %d bytes", calls.MaxReplyBytes), Calls: []processRow{}})
		return
	}
	resp, err := calls.Process(r.Context(), d, []byte(req.Reply))
	if err != nil {
		writeJSON(w, processAnswer{Error: s.red.Text(err.Error(), nil), Calls: []processRow{}})
		return
	}
	out := processAnswer{Calls: []processRow{}}
	for _, c := range resp.Calls {
		kind := string(mcs.CodeOf(c.Result, nil))
		if c.Error != "" {
			kind = "error"
		}
		if kind == string(mcs.CodeChallenge) {
			s.noteChallenge(c.Result)
		}
		out.Calls = append(out.Calls, processRow{Name: c.Name, ID: c.ID, Owned: true, Outcome: kind})
	}
	for _, c := range resp.Unowned {
		out.Calls = append(out.Calls, processRow{Name: c.Name, ID: c.ID, Outcome: "not run: no tool of the stack"})
	}
	out.Response = calls.Pretty(s.redactValue(resp, nil))
	writeJSON(w, out)
}

// question is a consent question of the permission middleware (ask = true)
// waiting for an answer in the browser.
type question struct {
	ID     string         `json:"id"`
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"arguments"`
	Asked  time.Time      `json:"asked"`
	answer chan bool
}

// Consent is the permission.ConsentFunc of the stack (stack.Host.Consent): each
// question waits on the Approvals page, and in the banner of every page, until
// it is answered there or ctx ends (the call's request went away), which
// refuses the call.
func (s *Server) Consent(ctx context.Context, name string, args map[string]any) (bool, error) {
	red, _ := s.red.Args(args)
	s.mu.Lock()
	s.nextQ++
	q := &question{ID: fmt.Sprintf("q%d", s.nextQ), Tool: name, Args: red, Asked: time.Now(), answer: make(chan bool, 1)}
	s.consents = append(s.consents, q)
	s.mu.Unlock()
	s.hub.publish("approvals", nil)
	defer func() {
		s.mu.Lock()
		s.consents = slices.DeleteFunc(s.consents, func(x *question) bool { return x == q })
		s.mu.Unlock()
		s.hub.publish("approvals", nil)
	}()
	select {
	case ok := <-q.answer:
		return ok, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-s.done:
		return false, errors.New("the console closed before the question was answered")
	}
}

type consentRequest struct {
	ID      string `json:"id"`
	Approve bool   `json:"approve"`
}

func (s *Server) apiConsent(w http.ResponseWriter, r *http.Request) {
	var req consentRequest
	if !readJSON(w, r, &req) {
		return
	}
	s.mu.Lock()
	var q *question
	for _, x := range s.consents {
		if x.ID == req.ID {
			q = x
		}
	}
	s.mu.Unlock()
	if q == nil {
		writeJSONStatus(w, http.StatusNotFound, map[string]string{"error": "no question " + req.ID + " waits: it was answered, or its call went away"})
		return
	}
	select {
	case q.answer <- req.Approve:
		writeJSON(w, map[string]string{"ok": "answered"})
	default:
		writeJSONStatus(w, http.StatusConflict, map[string]string{"error": "the question was answered already"})
	}
}

// requestView is an approval request as the Approvals page shows it.
type requestView struct {
	ID        string         `json:"id"`
	State     string         `json:"state"`
	Label     string         `json:"label,omitempty"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	// Details is what the driver adds for the person deciding (a mail
	// draft in full), redacted as the arguments are; nil when none.
	Details  any           `json:"details,omitempty"`
	Created  time.Time     `json:"created"`
	Expires  time.Time     `json:"expires"`
	Decision *decisionView `json:"decision,omitempty"`
}

type decisionView struct {
	Approve bool      `json:"approve"`
	By      string    `json:"by,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

type approvalsAnswer struct {
	Consent []*question   `json:"consent"`
	Store   bool          `json:"store"`
	Queue   bool          `json:"queue"`
	Pending []requestView `json:"pending"`
	Decided []requestView `json:"decided"`
	Error   string        `json:"error,omitempty"`
}

func (s *Server) apiApprovals(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.approvalsView(r.Context()))
}

func (s *Server) approvalsView(ctx context.Context) approvalsAnswer {
	s.mu.Lock()
	out := approvalsAnswer{Consent: slices.Clone(s.consents), Pending: []requestView{}, Decided: []requestView{}}
	store, storeErr, st := s.store, s.storeErr, s.st
	s.mu.Unlock()
	if out.Consent == nil {
		out.Consent = []*question{}
	}
	if st != nil && st.Approvals != nil {
		out.Queue = st.Approvals.Queue
	}
	if storeErr != nil {
		out.Error = s.red.Text(storeErr.Error(), nil)
	}
	if store == nil {
		return out
	}
	out.Store = true
	list, err := store.List(ctx, approvals.Filter{})
	if err != nil {
		out.Error = s.red.Text("list the approval requests: "+err.Error(), nil)
		return out
	}
	for _, rq := range list {
		args, known := s.red.Args(rq.Arguments)
		v := requestView{ID: rq.ID, State: string(rq.State), Label: rq.Label, Tool: rq.Tool, Arguments: args, Created: rq.Created, Expires: rq.Expires}
		if args == nil {
			v.Arguments = map[string]any{}
		}
		if len(rq.Details) > 0 {
			// Redacted as a result is: secret keys, and the secrets of the
			// arguments and of name/value pairs in the text (a draft's body).
			v.Details = s.redactPlain(rq.Details, known)
		}
		if d := rq.Decision; d != nil {
			v.Decision = &decisionView{Approve: d.Approve, By: s.red.Text(d.By, nil), Reason: s.red.Text(d.Reason, nil), At: d.At}
		}
		if rq.State == approvals.Pending {
			out.Pending = append(out.Pending, v)
		} else {
			out.Decided = append(out.Decided, v)
		}
	}
	return out
}

type decideRequest struct {
	ID      string `json:"id"`
	Approve bool   `json:"approve"`
	Reason  string `json:"reason"`
}

// apiDecide approves or denies a pending request of the store, as mcs
// approvals approve and deny do, and records the decision in the audit log.
func (s *Server) apiDecide(w http.ResponseWriter, r *http.Request) {
	var req decideRequest
	if !readJSON(w, r, &req) {
		return
	}
	s.mu.Lock()
	store := s.store
	s.mu.Unlock()
	if store == nil {
		writeJSONStatus(w, http.StatusConflict, map[string]string{"error": `the stack has no approval store (add ask = "queue" to its [middleware.permission] table)`})
		return
	}
	rq, err := store.Decide(r.Context(), req.ID, approvals.Decision{Approve: req.Approve, By: s.cfg.DecidedBy, Reason: req.Reason})
	if err != nil {
		code := http.StatusConflict
		msg := "cannot decide " + req.ID + ": " + err.Error()
		switch {
		case errors.Is(err, approvals.ErrNotFound):
			code, msg = http.StatusNotFound, "no approval request has the id "+req.ID
		case errors.Is(err, approvals.ErrDecided):
			msg = "cannot decide " + req.ID + ": it was decided already, and a decision is final"
		case errors.Is(err, approvals.ErrExpired):
			msg = "cannot decide " + req.ID + ": it expired before it was decided; the same call made again asks anew"
		}
		writeJSONStatus(w, code, map[string]string{"error": s.red.Text(msg, nil)})
		return
	}
	warning := ""
	if err := s.decisionsToAudit(r.Context(), store, rq); err != nil {
		warning = "the audit log does not have the decision yet (" + s.red.Text(err.Error(), nil) + "); it is kept with the request and written by the next decision"
	}
	s.hub.publish("approvals", nil)
	writeJSON(w, map[string]string{"ok": string(rq.State), "warning": warning})
}

type runApprovedRequest struct {
	ID string `json:"id"`
}

// apiRunApproved runs the call of an approved request once, through the whole
// stack, as mcs approvals run does.
func (s *Server) apiRunApproved(w http.ResponseWriter, r *http.Request) {
	var req runApprovedRequest
	if !readJSON(w, r, &req) {
		return
	}
	st, d, err := s.state()
	s.mu.Lock()
	store := s.store
	s.mu.Unlock()
	switch {
	case err != nil:
		writeJSON(w, Outcome{Kind: "error", Title: "The stack is not built", Text: s.red.Text(err.Error(), nil)})
		return
	case store == nil || st == nil || st.Approvals == nil || !st.Approvals.Queue:
		writeJSON(w, Outcome{Kind: "error", Title: "Not run", Text: `the stack does not queue calls (its [middleware.permission] has no ask = "queue"), so it cannot use an approval`})
		return
	}
	td, ok := d.(mcs.ToolDriver)
	if !ok {
		writeJSON(w, Outcome{Kind: "error", Title: "Not run", Text: "the stack's driver does not run tools by name"})
		return
	}
	rq, err := store.Get(r.Context(), req.ID)
	if err != nil {
		writeJSON(w, Outcome{Kind: "error", Title: "Not run", Text: s.red.Text("read approval request "+req.ID+": "+err.Error(), nil)})
		return
	}
	if rq.State != approvals.Approved {
		writeJSON(w, Outcome{Kind: "not-run", Title: "Not run", Text: "approval request " + rq.ID + " is " + string(rq.State) + ": only an approved request runs, once"})
		return
	}
	name, res, err := calls.RunApproval(r.Context(), td, rq)
	s.hub.publish("approvals", nil)
	writeJSON(w, s.outcome(name, rq.Arguments, res, err))
}

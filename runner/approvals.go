package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
)

// WithApprovals lets Run execute the calls that were approved since they were
// queued (see middleware/permission's WithApprovals, which queues them in store),
// exactly once, and tell the model what became of them.
//
// A call that waits for approval is a success for the driver: its result, the
// in-band pending signal {"approval_pending": true, "id": ..., "tool": ...,
// "message": ...}, goes to the model like any result, and the model answers the
// user (that the call waits, with the id); the round ends honestly, with or
// without this option.
//
// At the start of every Run, before the model's first request, the runner looks
// for those signals in the history: in the results of tool calls of any of the
// history formats (text protocol, Chat Completions, Responses, Anthropic,
// Gemini), read as JSON objects with "approval_pending": true and an "id";
// assistant messages are not looked at. For each id that an earlier Run has not
// reported yet, it reads the request from store:
//
//   - approved: the request's call runs once, through the driver's whole
//     middleware stack (the driver must implement ExecuteTool, as every
//     mcs.ToolDriver does), under the name that reaches the driver of its label
//     when the driver is an orchestrator (see approvals.CallName), with a context
//     marked by
//     approvals.ContextWithRun: the permission middleware runs it only when it
//     claims the approval, so that it runs once even when two runners, or a
//     runner and a person, race for it, and never queues it again. Its record
//     goes to Result.Calls (and to WithOnCall) like any call's;
//   - denied: the model is told that it was denied, and the reason;
//   - expired: the model is told that it expired without running;
//   - used (it ran elsewhere meanwhile): the model is told that it ran;
//   - pending, or unknown to the store: nothing.
//
// What the runner tells the model goes into one user message (the shape every
// provider accepts), before the input of the Run when there is one: one
// paragraph per request, each naming the tool and the id, as in
// "The approved call to 'delete_file' (approval <id>) ran." followed by the
// result framed as the driver's prompt strategy frames a result. The text
// "(approval <id>)" in a user message marks the request as reported, so that a
// later Run with this history reports it, and runs it, never again.
//
// A store error (a database that is down) fails Run before any request, with an
// error that wraps it; nothing runs then.
func WithApprovals(store approvals.Store) Option {
	return func(o *options) { o.approvals = store }
}

// executor is a driver that runs a tool by name through its middleware.
type executor interface {
	ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error)
}

// settleApprovals runs the approved requests whose pending signals are in the
// history, and returns what to tell the model.
func (r *Runner) settleApprovals(ctx context.Context, res *Result) (string, error) {
	store := r.o.approvals
	if store == nil {
		return "", nil
	}
	ids, reported := pendingIDs(res.History)
	var notes []string
	for _, id := range ids {
		if reported[id] {
			continue
		}
		req, err := store.Get(ctx, id)
		if errors.Is(err, approvals.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("approvals: read request %s: %w", id, err)
		}
		switch req.State {
		case approvals.Approved:
			note, err := r.runApproved(ctx, res, req)
			if err != nil {
				return "", err
			}
			notes = append(notes, note)
		case approvals.Denied:
			reason := ""
			if req.Decision != nil && strings.TrimSpace(req.Decision.Reason) != "" {
				reason = " Reason: " + strings.TrimSpace(req.Decision.Reason)
			}
			notes = append(notes, fmt.Sprintf("The call to '%s' (approval %s) was denied; it did not run.%s", req.Tool, id, reason))
		case approvals.Expired:
			notes = append(notes, fmt.Sprintf("The call to '%s' (approval %s) expired before it was approved; it did not run. If the user still wants it, call it again to ask for a new approval.", req.Tool, id))
		case approvals.Used:
			notes = append(notes, fmt.Sprintf("The approved call to '%s' (approval %s) has already run, outside this conversation; its result is not known here.", req.Tool, id))
		}
	}
	return strings.Join(notes, "\n\n"), nil
}

// runApproved runs the call of the approved request req through the driver and
// returns what to tell the model.
func (r *Runner) runApproved(ctx context.Context, res *Result, req approvals.Request) (string, error) {
	ex, ok := r.d.(executor)
	if !ok {
		return "", fmt.Errorf("approvals: request %s is approved, but the driver (%T) has no ExecuteTool to run it", req.ID, r.d)
	}
	call := mcs.ToolCall{Name: approvals.CallName(ctx, r.d, req), Arguments: req.Arguments}
	result, err := ex.ExecuteTool(approvals.ContextWithRun(ctx, req.ID), call.Name, req.Arguments)
	r.record(res, mcs.CallRecord{ToolCall: call, Result: result, Err: err})
	var text string
	head := fmt.Sprintf("The approved call to '%s' (approval %s) ran.", req.Tool, req.ID)
	if err != nil {
		head = fmt.Sprintf("The approved call to '%s' (approval %s) failed.", req.Tool, req.ID)
		text = err.Error()
	} else {
		text = mcs.ResultText(result)
	}
	framed, _ := r.ps.ResultMessage(call, text, err != nil)["content"].(string)
	if framed == "" {
		framed = text
	}
	return head + "\n" + framed, nil
}

// pendingIDs returns the ids of the pending signals in the results of history,
// in the order they first appear, and the ids a user message already reports
// ("(approval <id>)").
func pendingIDs(history []map[string]any) (ids []string, reported map[string]bool) {
	reported = map[string]bool{}
	seen := map[string]bool{}
	for _, msg := range history {
		role, _ := msg["role"].(string)
		if role == "assistant" || role == "model" {
			continue
		}
		walkStrings(msg, func(m map[string]any) {
			if id, ok := pendingID(m); ok && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}, func(s string) {
			if strings.Contains(s, `"approval_pending"`) {
				for _, id := range signalsIn(s) {
					if !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
			if role == "user" {
				for rest := s; ; {
					_, after, ok := strings.Cut(rest, "(approval ")
					if !ok {
						break
					}
					id, _, ok := strings.Cut(after, ")")
					if ok && id != "" && !strings.ContainsAny(id, " \n") {
						reported[id] = true
					}
					rest = after
				}
			}
		})
	}
	return ids, reported
}

// pendingID reports the id of a pending signal decoded as a map.
func pendingID(m map[string]any) (string, bool) {
	if m["approval_pending"] != true {
		return "", false
	}
	id, ok := m["id"].(string)
	return id, ok && id != ""
}

// walkStrings calls obj for every map and str for every string in v, at any
// depth.
func walkStrings(v any, obj func(map[string]any), str func(string)) {
	switch x := v.(type) {
	case string:
		str(x)
	case map[string]any:
		obj(x)
		for _, e := range x {
			walkStrings(e, obj, str)
		}
	case []any:
		for _, e := range x {
			walkStrings(e, obj, str)
		}
	case []map[string]any:
		for _, e := range x {
			walkStrings(e, obj, str)
		}
	}
}

// signalsIn returns the ids of the pending signals written as JSON objects in s
// (a result text, framed or not).
func signalsIn(s string) []string {
	var ids []string
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var m map[string]any
		if dec.Decode(&m) != nil {
			continue
		}
		if id, ok := pendingID(m); ok {
			ids = append(ids, id)
			i += int(dec.InputOffset()) - 1
		}
	}
	return ids
}

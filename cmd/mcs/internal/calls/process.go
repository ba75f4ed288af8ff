package calls

import (
	"context"
	"fmt"

	"github.com/mcs-go/mcs"
)

// MaxReplyBytes bounds the model reply that is processed.
const MaxReplyBytes = 16 << 20

// Response is a processed model reply as JSON: the flags, one record per call
// the stack owns, the calls it does not own, the retry prompt and the messages
// to append to the history.
type Response struct {
	CallExecuted bool   `json:"call_executed"`
	CallFailed   bool   `json:"call_failed"`
	CallPending  bool   `json:"call_pending"`
	RetryPrompt  string `json:"retry_prompt,omitempty"`
	Calls        []Call `json:"calls"`
	// Unowned are the calls of the reply that no tool of the stack owns: they
	// did not run.
	Unowned  []Call           `json:"unowned"`
	Messages []map[string]any `json:"messages"`
	// Denied says a call of the reply was denied.
	Denied bool `json:"-"`
}

// Call is one call of a processed reply.
type Call struct {
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Result    any            `json:"result,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// Process feeds reply to d, as d would get it from a model, which runs the
// calls it owns, and returns the Response as JSON. A JSON object is decoded as
// a native message by the driver; anything else is model text. The error says
// the driver could not tell which calls are its own (none ran).
func Process(ctx context.Context, d mcs.Driver, reply []byte) (Response, error) {
	resp := d.ProcessLLMResponse(ctx, reply)
	if resp.Unavailable != nil {
		return Response{}, fmt.Errorf("the stack cannot tell which calls of the reply are its own, none ran: %v", resp.Unavailable)
	}
	out := Response{
		CallExecuted: resp.CallExecuted, CallFailed: resp.CallFailed, CallPending: resp.CallPending,
		RetryPrompt: resp.RetryPrompt, Calls: []Call{}, Messages: resp.Messages,
	}
	if out.Messages == nil {
		out.Messages = []map[string]any{}
	}
	for _, rec := range resp.Calls {
		c := Call{ID: rec.ID, Name: rec.Name, Arguments: rec.Arguments, Result: rec.Result}
		if rec.Err != nil {
			c.Error = rec.Err.Error()
		}
		out.Denied = out.Denied || mcs.CodeOf(rec.Result, rec.Err) == mcs.CodeDenied
		out.Calls = append(out.Calls, c)
	}
	out.Unowned = Unowned(reply, resp.Calls)
	return out, nil
}

// Unowned returns the calls of reply that no record of owned answers: each call
// found in the reply ([mcs.ExtractCalls]) is matched with the first unused record
// of the same name and call id, as a runner matches them.
func Unowned(reply []byte, owned []mcs.CallRecord) []Call {
	_, found := mcs.ExtractCalls(reply)
	used := make([]bool, len(owned))
	out := []Call{}
	for _, c := range found {
		j := -1
		for k, rec := range owned {
			if !used[k] && rec.Name == c.Name && rec.ID == c.ID {
				j = k
				break
			}
		}
		if j >= 0 {
			used[j] = true
			continue
		}
		cj := Call{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if c.Err != nil {
			cj.Error = c.Err.Error()
		}
		out = append(out, cj)
	}
	return out
}

package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
)

func init() { addCommand(newProcessCommand) }

// maxReplyBytes bounds the model reply process reads.
const maxReplyBytes = 16 << 20

// responseJSON is the shape of mcs process's output.
type responseJSON struct {
	CallExecuted bool       `json:"call_executed"`
	CallFailed   bool       `json:"call_failed"`
	CallPending  bool       `json:"call_pending"`
	RetryPrompt  string     `json:"retry_prompt,omitempty"`
	Calls        []callJSON `json:"calls"`
	// Unowned are the calls of the reply that no tool of the stack owns: they
	// did not run.
	Unowned  []callJSON       `json:"unowned"`
	Messages []map[string]any `json:"messages"`
}

type callJSON struct {
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Result    any            `json:"result,omitempty"`
	Error     string         `json:"error,omitempty"`
}

func newProcessCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "process [FILE|-]",
		Short: "Show what a model reply would do",
		Long: `process feeds a model reply to the stack, as the stack's driver would get it
from a model, runs the tool calls it owns and prints the Response as JSON: the
flags, one record per call, the retry prompt and the messages to append to the
history. Calls that name no tool of the stack did not run: they are listed
under "unowned" and on stderr. The reply is text, or a JSON object in a provider's native shape (Chat
Completions, Responses, Anthropic Messages). It is read from FILE, or from stdin
when FILE is - or missing; a permission question then cannot be answered from
stdin and the call fails closed.

Exit code 1 when a call failed, was denied or names no tool of the stack.`,
		Example: `  echo '{"tool": "pets__findPetsByStatus", "arguments": {"status": "sold"}}' | mcs process
  mcs process reply.json`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			var r io.Reader = a.stdin
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return fmt.Errorf("open the reply: %w", err)
				}
				defer f.Close()
				r = f
			}
			data, err := io.ReadAll(io.LimitReader(r, maxReplyBytes+1))
			if err != nil {
				return fmt.Errorf("read the reply: %w", err)
			}
			if len(data) > maxReplyBytes {
				return fmt.Errorf("the reply is larger than %d bytes", maxReplyBytes)
			}
			d, err := a.build(c.Context())
			if err != nil {
				return err
			}
			// A JSON object is decoded as a native message by the driver; anything
			// else is model text.
			resp := d.ProcessLLMResponse(c.Context(), data)
			out := responseJSON{
				CallExecuted: resp.CallExecuted, CallFailed: resp.CallFailed, CallPending: resp.CallPending,
				RetryPrompt: resp.RetryPrompt, Calls: []callJSON{}, Unowned: []callJSON{}, Messages: resp.Messages,
			}
			if resp.Unavailable != nil {
				return failed("the stack cannot tell which calls of the reply are its own, none ran: %v", resp.Unavailable)
			}
			if out.Messages == nil {
				out.Messages = []map[string]any{}
			}
			denied := false
			for _, rec := range resp.Calls {
				cj := callJSON{ID: rec.ID, Name: rec.Name, Arguments: rec.Arguments, Result: rec.Result}
				if rec.Err != nil {
					cj.Error = rec.Err.Error()
				}
				denied = denied || mcs.CodeOf(rec.Result, rec.Err) == mcs.CodeDenied
				out.Calls = append(out.Calls, cj)
			}
			out.Unowned = unowned(data, resp.Calls)
			if err := writeJSON(a.stdout, out); err != nil {
				return err
			}
			for _, u := range out.Unowned {
				fmt.Fprintln(a.stderr, safeText(fmt.Sprintf("mcs: the reply calls %q, which is no tool of the stack: it did not run", u.Name)))
			}
			switch {
			case resp.CallFailed:
				return failed("a call of the reply failed")
			case denied:
				return failed("a call of the reply was denied")
			case len(out.Unowned) > 0:
				return failed("%d call(s) of the reply name no tool of the stack; run mcs tools to list them", len(out.Unowned))
			}
			return nil
		},
	}
}

// unowned returns the calls of reply that no record of owned answers: each call
// found in the reply ([mcs.ExtractCalls]) is matched with the first unused record
// of the same name and call id, as a runner matches them.
func unowned(reply []byte, owned []mcs.CallRecord) []callJSON {
	_, found := mcs.ExtractCalls(reply)
	used := make([]bool, len(owned))
	out := []callJSON{}
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
		cj := callJSON{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if c.Err != nil {
			cj.Error = c.Err.Error()
		}
		out = append(out, cj)
	}
	return out
}

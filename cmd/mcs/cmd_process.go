package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs/cmd/mcs/internal/calls"
)

func init() { addCommand(newProcessCommand) }

// maxReplyBytes bounds the model reply process reads.
const maxReplyBytes = calls.MaxReplyBytes

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
			out, err := calls.Process(c.Context(), d, data)
			if err != nil {
				return failed("%v", err)
			}
			if err := writeJSON(a.stdout, out); err != nil {
				return err
			}
			for _, u := range out.Unowned {
				fmt.Fprintln(a.stderr, safeText(fmt.Sprintf("mcs: the reply calls %q, which is no tool of the stack: it did not run", u.Name)))
			}
			switch {
			case out.CallFailed:
				return failed("a call of the reply failed")
			case out.Denied:
				return failed("a call of the reply was denied")
			case len(out.Unowned) > 0:
				return failed("%d call(s) of the reply name no tool of the stack; run mcs tools to list them", len(out.Unowned))
			}
			return nil
		},
	}
}

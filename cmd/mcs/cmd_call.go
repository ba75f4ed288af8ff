package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/cmd/mcs/internal/calls"
	"github.com/mcs-go/mcs/middleware/permission"
)

func init() { addCommand(newCallCommand) }

func newCallCommand(a *app) *cobra.Command {
	var argsJSON string
	return withArgsFlag(&cobra.Command{
		Use:   "call TOOL [key=value ...]",
		Short: "Run a tool through the whole stack",
		Long: `call runs one tool through the stack's middleware (audit, validation, permission, auth) and
prints the result, JSON pretty-printed. Arguments come from --args (a JSON object)
and from key=value pairs, which win; values are converted to the parameter's
type (integer, number, boolean, arrays as JSON or comma-separated, objects as
JSON). When the permission middleware asks, the question is on stderr and the
answer is read from stdin.

Arguments are checked against the tool's schema before it runs (the validate
middleware, on in every stack whose file gives no middleware order); a call
that breaks it does not run, and each problem is printed on a line of its own.

Exit code 1 when the tool fails, is denied, needs authentication or its arguments
are invalid (also a key=value pair or an --args object that cannot be read). Exit
code 3 when the call waits for approval (ask = "queue" in the stack's permission
table): it did not run, the result on stdout holds the approval's id, and once
the request is approved (mcs approvals approve ID) the same call runs once.`,
		Example: `  mcs call pets__findPetsByStatus status=available
  mcs call pets__addPet name=Rex species=dog
  mcs call shelter__read_csv_head --args '{"path": "adoptions.csv", "limit": 3}'
  mcs call pets__findPetsByStatus --args '{"limit": "many"}'   # exit 1: /limit: want integer`,
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: a.completeTool,
		RunE: func(c *cobra.Command, args []string) error {
			// Also the tools the policy hides from listings: calling one shows
			// its denial rather than "no tool is called".
			tools, td, err := a.tools(mcs.ContextWithHiddenTools(c.Context()))
			if err != nil {
				return err
			}
			t, err := resolveTool(c.Context(), td, tools, args[0])
			if err != nil {
				return err
			}
			callArgs, err := parseCallArgs(t, argsJSON, args[1:])
			if err != nil {
				return err
			}
			return a.runTool(c.Context(), td, t.Name, callArgs)
		},
	}, &argsJSON)
}

func withArgsFlag(c *cobra.Command, argsJSON *string) *cobra.Command {
	c.Flags().StringVar(argsJSON, "args", "", "the arguments as a JSON object")
	return c
}

// parseCallArgs merges the JSON object argsJSON with key=value pairs, coerced to
// the types of t's parameters. Its errors are exit-code-1 errors, as are those
// of arguments the validation refuses: the tool did not run because of its
// arguments.
func parseCallArgs(t mcs.Tool, argsJSON string, pairs []string) (map[string]any, error) {
	out := map[string]any{}
	if strings.TrimSpace(argsJSON) != "" {
		var err error
		if out, err = decodeArgs(argsJSON); err != nil {
			return nil, &exitError{code: exitFailed, err: err}
		}
	}
	for _, pair := range pairs {
		key, value, ok := strings.Cut(pair, "=")
		if !ok || key == "" {
			return nil, failed("argument %q is not key=value; write it as name=value", pair)
		}
		p, found := param(t, key)
		if !found {
			return nil, failed("tool %s has no parameter %q; %s", t.Name, key, paramNames(t))
		}
		v, err := coerce(p, value)
		if err != nil {
			return nil, &exitError{code: exitFailed, err: err}
		}
		out[key] = v
	}
	return out, nil
}

// argsExample ends the errors of --args.
const argsExample = `; write one JSON object, such as --args '{"status": "available"}'`

// decodeArgs decodes the JSON object of --args, integers as int64. Its error
// says what is wrong and at which byte: text cut short (by the shell's quoting,
// say), a syntax error, a value that is no object, or text after the object.
func decodeArgs(text string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var out map[string]any
	err := dec.Decode(&out)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("--args is cut short: the JSON ends at byte %d while a value is open; check the quoting%s", len(text), argsExample)
	case errors.As(err, &se):
		return nil, fmt.Errorf("--args is not valid JSON at byte %d of %d: %v%s", se.Offset, len(text), err, argsExample)
	case errors.As(err, &te):
		return nil, fmt.Errorf("--args is a JSON %s, not an object%s", te.Value, argsExample)
	case err != nil:
		return nil, fmt.Errorf("--args: %v%s", err, argsExample)
	case out == nil:
		return nil, fmt.Errorf("--args is null, not an object%s", argsExample)
	}
	if off := dec.InputOffset(); strings.TrimSpace(text[off:]) != "" {
		return nil, fmt.Errorf("--args has more after the object, from byte %d%s", off, argsExample)
	}
	for k, v := range out {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				out[k] = i
			} else if f, err := n.Float64(); err == nil {
				out[k] = f
			}
		}
	}
	return out, nil
}

// runTool executes a tool through the stack, prints the result on stdout and
// returns the error of [app.report].
func (a *app) runTool(ctx context.Context, td mcs.ToolDriver, name string, args map[string]any) error {
	res, err := td.ExecuteTool(ctx, name, args)
	return a.report(name, res, err)
}

// report prints the result of a call of name on stdout and returns an
// exit-code-1 error when the tool failed, was denied or needs authentication,
// and an exit-code-3 error naming the approval id when the call waits for
// approval (told by mcs.CodeOf).
func (a *app) report(name string, res any, err error) error {
	if err != nil {
		var ce *permission.ConsentError
		if errors.As(err, &ce) {
			return failed("%s was not run: %v", name, err)
		}
		var ae *mcs.ArgumentsError
		if errors.As(err, &ae) && len(ae.Problems) > 0 {
			return failed("%s", invalidArguments(name, ae.Problems))
		}
		return failed("%s failed: %v", name, err)
	}
	fmt.Fprintln(a.stdout, formatResult(res))
	switch mcs.CodeOf(res, nil) {
	case mcs.CodeDenied:
		return failed("%s was denied", name)
	case mcs.CodeChallenge:
		return failed("%s needs authentication: follow the message above", name)
	case mcs.CodePending:
		id := safeText(pendingID(res))
		return &exitError{code: exitPending, err: fmt.Errorf("%s waits for approval %s: it did not run; approve it with mcs approvals approve %s, then call it again (it runs once), or run it with mcs approvals run %s", name, id, id, id)}
	}
	return nil
}

// pendingID is the approval id of a pending result.
func pendingID(res any) string { return calls.PendingID(res) }

// invalidArguments is the message of a call the validation refused.
func invalidArguments(name string, problems []string) string {
	return calls.InvalidArguments(name, problems)
}

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/cmd/mcs/internal/calls"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/stack"
)

func init() { addCommand(newApprovalsCommand) }

func newApprovalsCommand(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "approvals",
		Short: "List, decide and run the calls that wait for approval",
		Long: `approvals works on the stack's approval store: the calls that wait for a person's
decision because the stack's [middleware.permission] table has ask = "queue" (the
store is the [approvals] table's, by default mcs-approvals.db next to the stack
file). Several processes may share the store: a call made by mcs serve-mcp, mcs
chat or mcs call waits there, a person decides here, and the same call then runs
exactly once, when it is made again (or with approvals run).

Exit codes: 0 done; 1 the request cannot be decided or run (already decided,
expired, not approved, used) or the store failed (locked or down: try again);
2 an unknown id, a stack without an approval store, or another usage error.`,
		Example: `  mcs approvals list
  mcs approvals show q3v6dnf3pjz5nbxwc4ckaumvxe
  mcs approvals approve q3v6dnf3pjz5nbxwc4ckaumvxe --reason "checked with the owner"
  mcs approvals deny q3v6dnf3pjz5nbxwc4ckaumvxe --reason "not this pet"
  mcs approvals run q3v6dnf3pjz5nbxwc4ckaumvxe`,
		Args: usageArgs(cobra.NoArgs),
	}
	c.AddCommand(newApprovalsList(a), newApprovalsShow(a), newApprovalsDecide(a, true), newApprovalsDecide(a, false), newApprovalsRun(a))
	return c
}

func newApprovalsList(a *app) *cobra.Command {
	var asJSON bool
	var state string
	c := &cobra.Command{
		Use:   "list [--json] [--state S]",
		Short: "List the approval requests, newest first",
		Long: `list prints the approval requests of the stack's store, newest first: the id, the
state, the driver and tool, when the request expires and the arguments. --state
keeps one state: pending, approved, denied, expired or used. --json prints a JSON
array of the requests.`,
		Example: `  mcs approvals list --state pending
  mcs approvals list --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			f := approvals.Filter{State: approvals.State(strings.ToLower(strings.TrimSpace(state)))}
			switch f.State {
			case "", approvals.Pending, approvals.Approved, approvals.Denied, approvals.Expired, approvals.Used:
			default:
				return fmt.Errorf("--state %q: unknown state; use pending, approved, denied, expired or used", safeText(state))
			}
			store, err := a.approvalStore(c.Context())
			if err != nil {
				return err
			}
			list, err := store.List(c.Context(), f)
			if err != nil {
				return storeFailed("list the approval requests", err)
			}
			a.auditDecisions(c.Context(), store)
			if asJSON {
				out := make([]requestJSON, len(list))
				for i, r := range list {
					out[i] = requestToJSON(r)
				}
				return writeJSON(a.stdout, out)
			}
			if len(list) == 0 {
				what := "approval requests"
				if f.State != "" {
					what = string(f.State) + " " + what
				}
				fmt.Fprintf(a.stdout, "no %s\n", what)
				return nil
			}
			w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			// The driver's label is set when the permission middleware is on a
			// driver under an orchestrator; a stack's is on the orchestrator, whose
			// tool names carry the label.
			labels := slices.ContainsFunc(list, func(r approvals.Request) bool { return r.Label != "" })
			if labels {
				fmt.Fprintln(w, "ID\tSTATE\tDRIVER\tTOOL\tEXPIRES\tARGUMENTS")
			} else {
				fmt.Fprintln(w, "ID\tSTATE\tTOOL\tEXPIRES\tARGUMENTS")
			}
			for _, r := range list {
				fmt.Fprintf(w, "%s\t%s\t", safeText(r.ID), r.State)
				if labels {
					fmt.Fprintf(w, "%s\t", safeText(cmp.Or(r.Label, "-")))
				}
				fmt.Fprintf(w, "%s\t%s\t%s\n", safeText(r.Tool), when(r.Expires), safeText(firstLine(compactJSON(r.Arguments), 60)))
			}
			return w.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the requests as a JSON array")
	c.Flags().StringVar(&state, "state", "", "only the requests in this state: pending, approved, denied, expired or used")
	return c
}

func newApprovalsShow(a *app) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Show one approval request",
		Long: `show prints one approval request: its state, the driver and tool, the arguments as
the model wrote them, the details the driver adds (the whole draft of a mail
driver's send_draft), when it was made and expires, and the decision.`,
		Example: `  mcs approvals show q3v6dnf3pjz5nbxwc4ckaumvxe`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			store, err := a.approvalStore(c.Context())
			if err != nil {
				return err
			}
			r, err := store.Get(c.Context(), args[0])
			if err != nil {
				return requestFailed(args[0], "read", err)
			}
			if asJSON {
				return writeJSON(a.stdout, requestToJSON(r))
			}
			w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "id\t%s\n", safeText(r.ID))
			fmt.Fprintf(w, "state\t%s\n", r.State)
			if r.Label != "" {
				fmt.Fprintf(w, "driver\t%s\n", safeText(r.Label))
			}
			fmt.Fprintf(w, "tool\t%s\n", safeText(r.Tool))
			fmt.Fprintf(w, "created\t%s\n", when(r.Created))
			fmt.Fprintf(w, "expires\t%s\n", when(r.Expires))
			if d := r.Decision; d != nil {
				fmt.Fprintf(w, "decision\t%s\n", safeText(decisionText(d)))
			}
			fmt.Fprintf(w, "fingerprint\t%s\n", safeText(r.Fingerprint))
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "arguments:")
			fmt.Fprintln(a.stdout, formatResult(r.Arguments))
			if len(r.Details) > 0 {
				fmt.Fprintln(a.stdout, "details (what the call does, from the driver):")
				fmt.Fprintln(a.stdout, formatResult(r.Details))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the request as a JSON object")
	return c
}

func newApprovalsDecide(a *app, approve bool) *cobra.Command {
	var reason, by string
	verb, done := "deny", "denied"
	short := "Deny a pending request: the call does not run"
	if approve {
		verb, done = "approve", "approved"
		short = "Approve a pending request: the call runs once"
	}
	c := &cobra.Command{
		Use:   verb + " ID [--reason R] [--by NAME]",
		Short: short,
		Long: verb + ` decides a pending request, once: a decision is final. --by names who decided
(default: the user name of this account); --reason is kept with the decision and,
for a denial, given to the model.

An approved call runs once: when the same call is made again (the model retries
it, or mcs call runs it), or with mcs approvals run ID. A denied call answers the
denial while the request lasts.`,
		Example: "  mcs approvals " + verb + " q3v6dnf3pjz5nbxwc4ckaumvxe --reason \"checked\"",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if strings.TrimSpace(by) == "" {
				by = userName()
			}
			store, err := a.approvalStore(c.Context())
			if err != nil {
				return err
			}
			r, err := store.Decide(c.Context(), args[0], approvals.Decision{Approve: approve, By: by, Reason: reason})
			if err != nil {
				return decideFailed(c.Context(), store, args[0], verb, err)
			}
			fmt.Fprintf(a.stdout, "%s %s: %s %s\n", done, safeText(r.ID), safeText(toolOf(r)), safeText(compactJSON(r.Arguments)))
			a.auditDecisions(c.Context(), store, r)
			if approve {
				fmt.Fprintf(a.stderr, "mcs: the same call now runs once; or run it now with mcs approvals run %s\n", safeText(r.ID))
			}
			return nil
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why; kept with the decision")
	c.Flags().StringVar(&by, "by", "", "who decides (default: the user name of this account)")
	return c
}

func newApprovalsRun(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "run ID",
		Short: "Run an approved request's call once, through the whole stack",
		Long: `run runs the call of an approved request now, once, through the stack's whole
middleware (audit, validation, permission, auth), without a model, and prints the
result as mcs call does. The approval is used: the same call made later waits for
a new one. A request that is not approved (pending, denied, expired) or was used
already does not run. The stack must be one whose calls wait in the store
(ask = "queue"): its permission middleware uses the approval.

Exit code 1 when the request cannot run or the tool fails, as for mcs call.`,
		Example: `  mcs approvals run q3v6dnf3pjz5nbxwc4ckaumvxe`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			ctx := c.Context()
			store, err := a.approvalStore(ctx)
			if err != nil {
				return err
			}
			id := args[0]
			r, err := store.Get(ctx, id)
			if err != nil {
				return requestFailed(id, "read", err)
			}
			if err := runnable(r); err != nil {
				return err
			}
			if !a.st.Approvals.Queue {
				// Its permission middleware would neither claim the approval nor
				// stop the call: it would run, and stay approved.
				return fmt.Errorf(`%s does not queue calls (its [middleware.permission] has no ask = "queue"), so it cannot use the approval: run the request with the stack file whose calls wait in this store`, a.st.File)
			}
			td, err := a.toolDriver(ctx)
			if err != nil {
				return err
			}
			name, res, err := calls.RunApproval(ctx, td, r)
			var ce *permission.ConsentError
			if errors.As(err, &ce) && ce.Reason == permission.ReasonNotApproved {
				return failed("%s did not run: the approval %s could not be used: it was used meanwhile, or the call no longer matches it (the tool's definition changed); mcs approvals show %s tells which", name, r.ID, r.ID)
			}
			if err := a.report(name, res, err); err != nil {
				return err
			}
			if now, err := store.Get(ctx, r.ID); err == nil && now.State == approvals.Approved {
				// A rule of the stack allows the call now: it ran without the
				// approval, which stays unused.
				fmt.Fprintf(a.stderr, "mcs: %s ran because a rule of the stack allows it now; approval %s was not needed and stays unused\n", name, safeText(r.ID))
			}
			return nil
		},
	}
}

// approvalStore opens the store of the stack the flags select.
func (a *app) approvalStore(ctx context.Context) (approvals.Store, error) {
	st, err := a.load()
	if err != nil {
		return nil, err
	}
	store, err := st.ApprovalStore(ctx)
	switch {
	case errors.Is(err, stack.ErrNoApprovals):
		return nil, fmt.Errorf(`%s has no approval store: add ask = "queue" to its [middleware.permission] table, or an [approvals] table with store = "sqlite:approvals.db" (or the store another program uses); or name the stack that has one with --stack FILE`, st.File)
	case err != nil:
		return nil, storeFailed("open the approval store", err)
	}
	return store, nil
}

// auditDecisions writes the decisions the stack's audit log does not hold yet
// (just, decided by this command, and any an earlier command left behind). A
// failure is a warning: the decisions are committed in the store's journal, and
// the next approvals command writes them.
func (a *app) auditDecisions(ctx context.Context, store approvals.Store, just ...approvals.Request) {
	if _, err := a.st.AuditDecisions(ctx, store, just...); err != nil {
		fmt.Fprintf(a.stderr, "mcs: warning: the audit log does not have every decision yet (%s); they are kept with the requests, and the next mcs approvals command writes them\n", safeText(err.Error()))
	}
}

// storeFailed is a failure of the store itself (locked, down, corrupt): exit 1.
func storeFailed(op string, err error) error {
	return failed("%s: %v", op, err)
}

// requestFailed explains why request id could not be read.
func requestFailed(id, op string, err error) error {
	if errors.Is(err, approvals.ErrNotFound) {
		return fmt.Errorf("no approval request has the id %q; mcs approvals list shows the ids", safeText(id))
	}
	return storeFailed(op+" approval request "+safeText(id), err)
}

// decideFailed explains why request id could not be decided, with its state.
func decideFailed(ctx context.Context, store approvals.Store, id, verb string, err error) error {
	switch {
	case errors.Is(err, approvals.ErrNotFound):
		return requestFailed(id, verb, err)
	case errors.Is(err, approvals.ErrExpired):
		r, gerr := store.Get(ctx, id)
		if gerr != nil {
			return failed("cannot %s %s: it expired before it was decided; the same call made again asks anew", verb, safeText(id))
		}
		return failed("cannot %s %s: it expired at %s before it was decided; the same call made again asks anew", verb, safeText(id), when(r.Expires))
	case errors.Is(err, approvals.ErrDecided):
		r, gerr := store.Get(ctx, id)
		if gerr != nil || r.Decision == nil {
			return failed("cannot %s %s: it was decided already, and a decision is final", verb, safeText(id))
		}
		return failed("cannot %s %s: it was %s already, and a decision is final (state %s)", verb, safeText(id), safeText(decisionText(r.Decision)), r.State)
	}
	return storeFailed(verb+" approval request "+safeText(id), err)
}

// runnable explains why r cannot run, nil when it is approved.
func runnable(r approvals.Request) error {
	id := safeText(r.ID)
	switch r.State {
	case approvals.Approved:
		return nil
	case approvals.Pending:
		return failed("approval request %s is pending: approve it first (mcs approvals approve %s), then run it", id, id)
	case approvals.Denied:
		return failed("approval request %s was %s: its call does not run", id, safeText(decisionText(r.Decision)))
	case approvals.Used:
		return failed("approval request %s was used: its call ran once already, and an approval runs one call; the same call made again asks anew", id)
	case approvals.Expired:
		return failed("approval request %s expired at %s: its call does not run; the same call made again asks anew", id, when(r.Expires))
	}
	return failed("approval request %s is %s: its call does not run", id, safeText(string(r.State)))
}

// requestJSON is a request as list --json and show --json print it.
type requestJSON struct {
	ID          string          `json:"id"`
	State       approvals.State `json:"state"`
	Label       string          `json:"label,omitempty"`
	Tool        string          `json:"tool"`
	Arguments   map[string]any  `json:"arguments"`
	Details     map[string]any  `json:"details,omitempty"`
	Created     time.Time       `json:"created"`
	Expires     time.Time       `json:"expires"`
	Decision    *decisionJSON   `json:"decision,omitempty"`
	Fingerprint string          `json:"fingerprint"`
}

type decisionJSON struct {
	Approve bool      `json:"approve"`
	By      string    `json:"by,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

func requestToJSON(r approvals.Request) requestJSON {
	out := requestJSON{ID: r.ID, State: r.State, Label: r.Label, Tool: r.Tool, Arguments: r.Arguments, Details: r.Details,
		Created: r.Created, Expires: r.Expires, Fingerprint: r.Fingerprint}
	if out.Arguments == nil {
		out.Arguments = map[string]any{}
	}
	if d := r.Decision; d != nil {
		out.Decision = &decisionJSON{Approve: d.Approve, By: d.By, Reason: d.Reason, At: d.At}
	}
	return out
}

// toolOf names the request's tool and, when it has one, its driver's label.
func toolOf(r approvals.Request) string {
	if r.Label == "" {
		return r.Tool
	}
	return r.Tool + " (driver " + r.Label + ")"
}

// decisionText describes a decision: "approved by alice at ... (reason)".
func decisionText(d *approvals.Decision) string {
	if d == nil {
		return "undecided"
	}
	s := "denied"
	if d.Approve {
		s = "approved"
	}
	if d.By != "" {
		s += " by " + d.By
	}
	s += " at " + when(d.At)
	if r := strings.TrimSpace(d.Reason); r != "" {
		s += ": " + r
	}
	return s
}

// when formats a time of the store in the local time zone, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

// compactJSON is v as one line of JSON.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// userName is who decides when --by is not given: the account's user name,
// else $USER, else "mcs".
func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "mcs"
}

package stack

import (
	"context"
	"errors"
	"slices"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
)

func init() {
	RegisterMiddlewareKind(MiddlewareKind{
		Name:    "permission",
		Summary: "consent before a call (read_only = true runs tools annotated read-only; allow, deny: glob patterns; ask = true asks the user for the rest, ask = \"queue\" makes them wait for an approval; timeout)",
		Rank:    20,
		Decode:  decodePermission,
	})
}

var _ MiddlewareConfig = (*permissionConfig)(nil)

type permissionConfig struct {
	rules []permission.Rule
	ask   bool // ask = true: Host.Consent
	queue bool // ask = "queue": the approval store
	opts  []permission.Option
}

// decodePermission reads [middleware.permission]:
//
//	deny = ["*delete*"]       # tried first
//	read_only = true          # then: run the tools annotated read-only without asking
//	allow = ["pets__find*"]   # then: glob patterns; "pets__x" and "pets:x" name the driver labelled pets
//	ask = true                # ask the user for every call no rule decides
//	                          # ask = "queue": such a call waits for an approval (see [Approvals])
//	timeout = "2m"            # wait at most this long for an answer
//
// Rules are tried in the order deny, read_only, allow; the first that matches
// decides. Patterns match case-insensitively (also in snake case) the tool
// name the model sees and the tool part after each "__"; a pattern with a
// label part ("pets__find*", "pets:find*") allows only the tools of the driver
// registered under that label, never a tool whose own name starts "pets__"
// (see [permission.Rule]). A tool a deny pattern always denies is left out of
// the listing. read_only trusts the drivers' annotations: REST derives
// them from the HTTP method (GET, HEAD, OPTIONS read), the filesystem driver
// marks its reading tools, the CSV driver all of its tools. Without ask, a call
// no rule allows fails closed. With ask = "queue", it does not run: it waits in
// the stack's approval store (the [approvals] table, by default
// mcs-approvals.db next to the stack file) for a decision made elsewhere (mcs
// approvals approve), and the model reads that it waits.
func decodePermission(t *Table) MiddlewareConfig {
	c := &permissionConfig{}
	for _, p := range t.Strings("deny") {
		c.rules = append(c.rules, permission.Deny(p))
	}
	if t.Bool("read_only") {
		c.rules = append(c.rules, permission.ReadOnly())
	}
	for _, p := range t.Strings("allow") {
		c.rules = append(c.rules, permission.Allow(p))
	}
	for _, r := range c.rules {
		if err := r.Validate(); err != nil {
			key := "allow"
			if !r.Allows() {
				key = "deny"
			}
			t.Errorf(key, "pattern %q is malformed; use * ? and [...] as in a file glob", r.Pattern())
		}
	}
	switch v, _ := t.get("ask"); v := v.(type) {
	case nil:
	case bool:
		c.ask = v
	case string:
		if v != "queue" {
			t.Errorf("ask", `%q is not a way to ask; use ask = true (ask on the terminal), ask = "queue" (wait for an approval) or ask = false`, v)
		}
		c.queue = v == "queue"
	default:
		t.Errorf("ask", `must be true, false or "queue" (got %s)`, describe(v))
	}
	if d := t.Duration("timeout"); d > 0 {
		c.opts = append(c.opts, permission.WithTimeout(d))
	}
	c.opts = append(c.opts, permission.WithRules(c.rules...))
	return c
}

func (c *permissionConfig) asks() bool   { return c.ask }
func (c *permissionConfig) queues() bool { return c.queue }

func (c *permissionConfig) Middleware(_ context.Context, b *Builder) (mcs.ToolMiddleware, error) {
	var consent permission.ConsentFunc
	if c.queue {
		if b.approvals == nil {
			return nil, errors.New(`ask = "queue", but the stack has no approval store`)
		}
		return permission.New(nil, append(slices.Clip(c.opts), permission.WithApprovals(b.approvals, b.approvalTTL), permission.WithDescriber(b.describe))...), nil
	}
	if c.ask {
		consent = b.Host().Consent
		if consent == nil {
			return nil, errors.New("ask = true, but the program gives no way to ask (Host.Consent is nil); set Host.Consent or use allow and deny rules only")
		}
		b.consent = consent
	}
	return permission.New(consent, append(slices.Clip(c.opts), permission.WithDescriber(b.describe))...), nil
}

package stack

import (
	"context"
	"errors"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
)

func init() {
	RegisterMiddlewareKind(MiddlewareKind{
		Name:    "permission",
		Summary: "consent before a call (allow, deny: glob patterns; ask = true asks the user for the rest; timeout)",
		Rank:    20,
		Decode:  decodePermission,
	})
}

var _ MiddlewareConfig = (*permissionConfig)(nil)

type permissionConfig struct {
	rules []permission.Rule
	ask   bool
	opts  []permission.Option
}

// decodePermission reads [middleware.permission]:
//
//	allow = ["pets__find*"]   # glob patterns on the tool name the model sees
//	deny = ["*delete*"]       # deny rules are tried before allow rules
//	ask = true                # ask the user for every call no rule decides
//	timeout = "2m"            # wait at most this long for an answer
//
// Without ask, a call no rule allows fails closed.
func decodePermission(t *Table) MiddlewareConfig {
	c := &permissionConfig{}
	for _, p := range t.Strings("deny") {
		c.rules = append(c.rules, permission.Deny(p))
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
	c.ask = t.Bool("ask")
	if d := t.Duration("timeout"); d > 0 {
		c.opts = append(c.opts, permission.WithTimeout(d))
	}
	c.opts = append(c.opts, permission.WithRules(c.rules...))
	return c
}

func (c *permissionConfig) Middleware(_ context.Context, b *Builder) (mcs.ToolMiddleware, error) {
	var consent permission.ConsentFunc
	if c.ask {
		consent = b.Host().Consent
		if consent == nil {
			return nil, errors.New("ask = true, but the program gives no way to ask (Host.Consent is nil); set Host.Consent or use allow and deny rules only")
		}
	}
	return permission.New(consent, c.opts...), nil
}

package permission_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/middleware/permission"
)

// TestConformance runs the middleware through the conformance kit: allowed by a
// rule, by the consent function, and denied (an answer of its own).
func TestConformance(t *testing.T) {
	yes := func(context.Context, string, map[string]any) (bool, error) { return true, nil }
	for name, mw := range map[string]*permission.Middleware{
		"allowed by a rule":  permission.New(nil, permission.WithRules(permission.Allow("get_*"))),
		"allowed by consent": permission.New(yes),
		"denied by a rule":   permission.New(yes, permission.WithRules(permission.Deny("get_*"))),
		"no consent":         permission.New(nil),
	} {
		if err := mcstest.TestMiddleware(mw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

package hooks_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/middleware/hooks"
)

// TestConformance runs the middleware, bare, with hooks that write into the
// copies they are given and with the audit hooks, through the conformance kit.
func TestConformance(t *testing.T) {
	look := hooks.New(
		hooks.WithPre(func(_ context.Context, _ string, args map[string]any) { args["city"] = "elsewhere" }),
		hooks.WithPost(func(_ context.Context, _ string, args map[string]any, _ any) { clear(args) }))
	for name, mw := range map[string]*hooks.Middleware{
		"bare":    hooks.New(),
		"looking": look,
		"audit":   hooks.New(hooks.WithSet(hooks.SlogAudit(slog.New(slog.NewTextHandler(io.Discard, nil))))),
	} {
		if err := mcstest.TestMiddleware(mw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

package tracing_test

import (
	"testing"

	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/middleware/tracing"
)

// TestConformance runs the middleware, without and with content, through the
// conformance kit.
func TestConformance(t *testing.T) {
	for name, mw := range map[string]*tracing.Middleware{
		"default":      tracing.New(),
		"with content": tracing.New(tracing.WithContent()),
	} {
		if err := mcstest.TestMiddleware(mw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

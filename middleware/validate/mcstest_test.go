package validate_test

import (
	"testing"

	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/middleware/validate"
)

// TestConformance runs the middleware, strict and coercing, through the
// conformance kit.
func TestConformance(t *testing.T) {
	for name, mw := range map[string]*validate.Middleware{
		"strict":   validate.New(),
		"coercing": validate.New(validate.WithCoercion()),
	} {
		if err := mcstest.TestMiddleware(mw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

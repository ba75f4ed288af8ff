package auth_test

import (
	"testing"

	"github.com/mcs-go/mcs/mcstest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// TestConformance runs the middleware through the conformance kit.
func TestConformance(t *testing.T) {
	if err := mcstest.TestMiddleware(auth.New()); err != nil {
		t.Error(err)
	}
}

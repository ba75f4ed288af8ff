package stack

import (
	"context"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	RegisterMiddlewareKind(MiddlewareKind{
		Name:    "auth",
		Summary: "authentication challenges as results the user can act on (no settings)",
		Rank:    40,
		Decode:  func(*Table) MiddlewareConfig { return authConfig{} },
	})
}

// authConfig is [middleware.auth], which has no keys.
var _ MiddlewareConfig = authConfig{}

type authConfig struct{}

func (authConfig) Middleware(context.Context, *Builder) (mcs.ToolMiddleware, error) {
	return auth.New(), nil
}

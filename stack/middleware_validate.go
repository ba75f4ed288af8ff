package stack

import (
	"context"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/validate"
)

func init() {
	RegisterMiddlewareKind(MiddlewareKind{
		Name:    "validate",
		Summary: "arguments checked against the tool's JSON Schema before it runs (coercion; unknown = \"error\" | \"drop\" | \"allow\"; formats)",
		Rank:    15,
		Default: true,
		Decode:  decodeValidate,
	})
}

var _ MiddlewareConfig = (*validateConfig)(nil)

type validateConfig struct{ opts []validate.Option }

// decodeValidate reads [middleware.validate]:
//
//	coercion = true                    # "5" -> 5, "true" -> true, ... where the schema asks for it
//	unknown = "error"                  # or "drop", "allow": arguments the tool does not declare
//	formats = true                     # check "format" (date-time, email, uuid, ...)
//	unchecked_invalid_schemas = false  # run calls of a tool whose schema is broken
func decodeValidate(t *Table) MiddlewareConfig {
	c := &validateConfig{}
	if t.Bool("coercion") {
		c.opts = append(c.opts, validate.WithCoercion())
	}
	if t.Has("unknown") {
		u, err := validate.ParseUnknown(t.String("unknown"))
		if err != nil {
			t.Errorf("unknown", "%q is not a policy; use \"error\", \"drop\" or \"allow\"", t.String("unknown"))
		}
		c.opts = append(c.opts, validate.WithUnknown(u))
	}
	if t.Has("formats") {
		c.opts = append(c.opts, validate.WithFormatAssertion(t.Bool("formats")))
	}
	if t.Bool("unchecked_invalid_schemas") {
		c.opts = append(c.opts, validate.WithUncheckedInvalidSchemas())
	}
	return c
}

func (c *validateConfig) Middleware(context.Context, *Builder) (mcs.ToolMiddleware, error) {
	return validate.New(c.opts...), nil
}

package auth_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
)

// BenchmarkMiddleware measures the auth middleware around a trivial tool: a call
// that passes through (the common case) and a challenge turned into its result.
func BenchmarkMiddleware(b *testing.B) {
	ch := &auth.Challenge{Message: "sign in", URL: "https://example.com/device", Code: "C-1", Scope: "github"}
	wrapped := fmt.Errorf("tool: %w", ch)
	cases := []struct {
		name string
		next mcs.CallNext
	}{
		{"bare", nil},
		{"pass-through", func(context.Context, string, map[string]any) (any, error) { return "ok", nil }},
		{"challenge", func(context.Context, string, map[string]any) (any, error) { return nil, wrapped }},
	}
	args := map[string]any{"q": "x"}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			call := mcs.Chain(func(context.Context, string, map[string]any) (any, error) { return "ok", nil })
			if c.next != nil {
				call = mcs.Chain(c.next, auth.New())
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := call(ctx, "tool", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStaticProvider measures a token found in the map and one found in the
// environment.
func BenchmarkStaticProvider(b *testing.B) {
	b.Setenv("MCS_TOKEN_MY_API_V2", "from-env")
	p := auth.NewStaticProvider(map[string]string{"github": "from-map"})
	for _, scope := range []string{"github", "my-api.v2"} {
		b.Run(scope, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Token(ctx, scope); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

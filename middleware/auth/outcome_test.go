package auth_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcs-go/mcs/middleware/auth"
)

func TestIsChallenge(t *testing.T) {
	ch := &auth.Challenge{Message: "open the page", URL: "https://example.com/device", Scope: "github"}
	res, err := auth.New().OnExecuteTool(context.Background(), "t", nil, func(context.Context, string, map[string]any) (any, error) {
		return nil, fmt.Errorf("list repos: %w", ch)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		v    any
		want bool
	}{
		{"middleware result", res, true},
		{"nil challenge result", (*auth.Challenge)(nil).Result(), true},
		{"challenge", ch, true},
		{"wrapped challenge error", fmt.Errorf("x: %w", ch), true},
		{"joined", errors.Join(errors.New("a"), ch), true},
		{"other error", errors.New("auth_required"), false},
		{"false flag", map[string]any{"auth_required": "true"}, false},
		{"ordinary result", map[string]any{"ok": true}, false},
		{"text", "auth_required", false},
		{"nil", nil, false},
	} {
		if got := auth.IsChallenge(tt.v); got != tt.want {
			t.Errorf("%s: IsChallenge = %v, want %v", tt.name, got, tt.want)
		}
	}
}

package auth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/concerntest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// authDriver builds the auth concern in, without the middleware: a challenge of
// its credential provider becomes the in-band result.
type authDriver struct{ credTool }

func (d *authDriver) Meta() mcs.Meta {
	return mcs.Meta{ID: "test/auth", Name: "Auth", Version: "1.0.0",
		Capabilities: []mcs.Capability{auth.Capability}}
}

func (d *authDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	res, err := d.credTool.ExecuteTool(ctx, name, args)
	if ch, ok := errors.AsType[*auth.Challenge](err); ok {
		return ch.Result(), nil
	}
	return res, err
}

func (*authDriver) HandlesAuthChallenges() {}

func TestSupportsAuth(t *testing.T) {
	concerntest.Check[auth.SupportsAuth](t, auth.Capability, auth.New(), &authDriver{})
}

// TestSupportsAuthBehaviour checks the promise of the marker for the middleware
// and for a driver that builds the concern in: a call that meets a challenge
// succeeds with the challenge's in-band result, and other errors stay errors.
func TestSupportsAuthBehaviour(t *testing.T) {
	ch := &auth.Challenge{Message: "sign in", URL: "https://example.com/d", Code: "C-1", Scope: "github"}
	challenge := auth.CredentialProviderFunc(func(context.Context, string) (string, error) { return "", ch })
	missing := auth.CredentialProviderFunc(func(context.Context, string) (string, error) { return "", auth.ErrNoCredential })
	impls := []struct {
		name string
		new  func(p auth.CredentialProvider) mcs.ToolDriver
	}{
		{"middleware", func(p auth.CredentialProvider) mcs.ToolDriver {
			return mcs.NewBaseDriver(&credTool{provider: p, scope: "github"}, mcs.WithMiddleware(auth.New()))
		}},
		{"built in", func(p auth.CredentialProvider) mcs.ToolDriver {
			return &authDriver{credTool{provider: p, scope: "github"}}
		}},
	}
	tests := []struct {
		name     string
		provider auth.CredentialProvider
		want     any
		wantErr  error
	}{
		{"challenge is answered in band", challenge, ch.Result(), nil},
		{"other errors stay errors", missing, nil, auth.ErrNoCredential},
	}
	for _, im := range impls {
		for _, tt := range tests {
			t.Run(im.name+"/"+tt.name, func(t *testing.T) {
				res, err := im.new(tt.provider).ExecuteTool(t.Context(), "list_repos", nil)
				if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Errorf("error = %v, want %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, res); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
			})
		}
	}
}

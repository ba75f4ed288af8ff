package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
)

func TestChallengeError(t *testing.T) {
	tests := []struct {
		name string
		ch   *auth.Challenge
		want string
	}{
		{"message", &auth.Challenge{Message: "open x", Scope: "github"}, "authentication required: open x"},
		{"scope only", &auth.Challenge{Scope: "github"}, "authentication required for github"},
		{"empty", &auth.Challenge{}, "authentication required"},
		{"nil", nil, "authentication required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ch.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChallengeResult(t *testing.T) {
	tests := []struct {
		name string
		ch   *auth.Challenge
		want string // the JSON the model reads
	}{
		{
			"all fields",
			&auth.Challenge{Message: "m", URL: "https://example.com/device", Code: "ABCD-EFGH", Scope: "github"},
			`{"auth_required":true,"code":"ABCD-EFGH","message":"m","scope":"github","url":"https://example.com/device"}`,
		},
		{"empty fields left out", &auth.Challenge{Message: "m", Scope: "s"}, `{"auth_required":true,"message":"m","scope":"s"}`},
		{"zero", &auth.Challenge{}, `{"auth_required":true}`},
		{"nil", nil, `{"auth_required":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := tt.ch.Result()
			if res.Kind != mcs.CodeChallenge || mcs.CodeOf(res, nil) != mcs.CodeChallenge {
				t.Errorf("Result().Kind = %q, want %q", res.Kind, mcs.CodeChallenge)
			}
			got, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Result() as JSON = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMiddleware(t *testing.T) {
	errOther := errors.New("boom")
	ch := &auth.Challenge{Message: "sign in", URL: "https://example.com/d", Code: "C-1", Scope: "github"}
	chResult := ch.Result()
	tests := []struct {
		name    string
		res     any
		err     error
		want    any
		wantErr error
	}{
		{"result passes through", "ok", nil, "ok", nil},
		{"nil result passes through", nil, nil, nil, nil},
		{"other error passes through", nil, errOther, nil, errOther},
		{"result with other error passes through", "partial", errOther, "partial", errOther},
		{"challenge", nil, ch, chResult, nil},
		{"wrapped challenge", nil, fmt.Errorf("tool x: %w", fmt.Errorf("token: %w", ch)), chResult, nil},
		{"joined challenge", nil, errors.Join(errOther, ch), chResult, nil},
		{"nil challenge in chain", nil, fmt.Errorf("x: %w", (*auth.Challenge)(nil)), mcs.Signal{Kind: mcs.CodeChallenge}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"a": 1.0}
			var gotName string
			var gotArgs map[string]any
			next := func(_ context.Context, name string, a map[string]any) (any, error) {
				gotName, gotArgs = name, a
				return tt.res, tt.err
			}
			res, err := auth.New().OnExecuteTool(t.Context(), "tool", args, next)
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
			if err != tt.wantErr {
				t.Errorf("error = %v, want %v (the identical value)", err, tt.wantErr)
			}
			if gotName != "tool" || cmp.Diff(map[string]any{"a": 1.0}, gotArgs) != "" {
				t.Errorf("next got (%q, %v), want the call unchanged", gotName, gotArgs)
			}
		})
	}
}

// credTool is a one-tool ToolDriver whose tool asks a CredentialProvider.
type credTool struct {
	provider auth.CredentialProvider
	scope    string
}

func (d *credTool) Meta() mcs.Meta {
	return mcs.Meta{ID: "cred", Name: "cred", Version: "1.0.0"}
}

func (d *credTool) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "list_repos", Description: "List the user's repositories."}}, nil
}

func (d *credTool) ExecuteTool(ctx context.Context, name string, _ map[string]any) (any, error) {
	tok, err := d.provider.Token(ctx, d.scope)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if tok == "" {
		return nil, errors.New("empty token")
	}
	return "2 repositories", nil
}

func TestMiddlewareOnDriver(t *testing.T) {
	ch := &auth.Challenge{Message: "sign in", Code: "C-1", Scope: "github"}
	challenge := auth.CredentialProviderFunc(func(context.Context, string) (string, error) { return "", ch })
	failing := auth.CredentialProviderFunc(func(context.Context, string) (string, error) { return "", auth.ErrNoCredential })
	granted := auth.CredentialProviderFunc(func(context.Context, string) (string, error) { return "t", nil })

	tests := []struct {
		name     string
		provider auth.CredentialProvider
		want     any
		wantErr  error
	}{
		{"challenge becomes a result", challenge, ch.Result(), nil},
		{"no credential stays an error", failing, nil, auth.ErrNoCredential},
		{"token runs the tool", granted, "2 repositories", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td := &credTool{provider: tt.provider, scope: "github"}
			d := mcs.NewBaseDriver(td, mcs.WithMiddleware(auth.New()))

			// From the model.
			resp := d.ProcessLLMResponse(t.Context(), `{"tool":"list_repos","arguments":{}}`)
			if len(resp.Calls) != 1 {
				t.Fatalf("got %d calls, want 1", len(resp.Calls))
			}
			if diff := cmp.Diff(tt.want, resp.Calls[0].Result); diff != "" {
				t.Errorf("ProcessLLMResponse result mismatch (-want +got):\n%s", diff)
			}
			if !errors.Is(resp.Calls[0].Err, tt.wantErr) || (tt.wantErr == nil) != (resp.Calls[0].Err == nil) {
				t.Errorf("ProcessLLMResponse error = %v, want %v", resp.Calls[0].Err, tt.wantErr)
			}
			if resp.CallExecuted != (tt.wantErr == nil) || resp.CallFailed != (tt.wantErr != nil) {
				t.Errorf("CallExecuted, CallFailed = %t, %t", resp.CallExecuted, resp.CallFailed)
			}

			// From outside, as an orchestrator calls it.
			res, err := d.ExecuteTool(t.Context(), "list_repos", nil)
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("ExecuteTool result mismatch (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("ExecuteTool error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestMiddlewareLeavesMetaAlone(t *testing.T) {
	td := &credTool{provider: auth.NewStaticProvider(nil), scope: "github"}
	plain := mcs.NewBaseDriver(td).Meta()
	with := mcs.NewBaseDriver(td, mcs.WithMiddleware(auth.New())).Meta()
	if diff := cmp.Diff(plain, with); diff != "" {
		t.Errorf("Meta changed by the auth middleware (-without +with):\n%s", diff)
	}
	if with.HasCapability(auth.Capability) {
		t.Errorf("Meta advertises %q; middleware must not appear in the meta", auth.Capability)
	}
}

func TestMiddlewareSharedAcrossDrivers(t *testing.T) {
	mw := auth.New()
	ch := &auth.Challenge{Scope: "a"}
	d1 := mcs.NewBaseDriver(&credTool{provider: auth.CredentialProviderFunc(func(context.Context, string) (string, error) { return "", ch }), scope: "a"}, mcs.WithMiddleware(mw))
	d2 := mcs.NewBaseDriver(&credTool{provider: auth.NewStaticProvider(map[string]string{"b": "t"}), scope: "b"}, mcs.WithMiddleware(mw))

	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 16 {
		wg.Go(func() {
			if res, err := d1.ExecuteTool(t.Context(), "list_repos", nil); err != nil || cmp.Diff(ch.Result(), res) != "" {
				errs <- fmt.Sprintf("driver 1: %v, %v", res, err)
			}
		})
		wg.Go(func() {
			if res, err := d2.ExecuteTool(t.Context(), "list_repos", nil); err != nil || res != "2 repositories" {
				errs <- fmt.Sprintf("driver 2: %v, %v", res, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

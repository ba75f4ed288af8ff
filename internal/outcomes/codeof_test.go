package outcomes_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/hooks"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/middleware/validate"
)

// tools is a tool driver whose tools return what their names say.
type tools struct{}

func (tools) Meta() mcs.Meta { return mcs.Meta{ID: "test/outcomes", Name: "outcomes", Version: "1"} }

func (tools) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{
		{Name: "ok", Description: "d"},
		{Name: "fail", Description: "d"},
		{Name: "explode", Description: "d"},
		{Name: "count", Description: "d", Parameters: []mcs.Parameter{{Name: "n", Required: true, Schema: map[string]any{"type": "integer"}}}},
	}, nil
}

func (tools) ExecuteTool(_ context.Context, name string, _ map[string]any) (any, error) {
	switch name {
	case "ok", "count":
		return "done", nil
	case "fail":
		return nil, errors.New("disk on fire")
	case "explode":
		panic("boom")
	}
	return nil, fmt.Errorf("%w %q", mcs.ErrUnknownTool, name)
}

// outcome is one call's result and error.
type outcome struct {
	result any
	err    error
}

func call(t *testing.T, d mcs.ToolDriver, name string, args map[string]any) outcome {
	t.Helper()
	res, err := d.ExecuteTool(context.Background(), name, args)
	return outcome{res, err}
}

// first returns the outcome of the first call of a model output.
func first(t *testing.T, d *mcs.BaseDriver, output any) outcome {
	t.Helper()
	resp := d.ProcessLLMResponse(context.Background(), output)
	if len(resp.Calls) == 0 {
		t.Fatalf("no call in %v", output)
	}
	return outcome{resp.Calls[0].Result, resp.Calls[0].Err}
}

// last returns the outcome of the last call of a model output.
func last(t *testing.T, d *mcs.BaseDriver, output any) outcome {
	t.Helper()
	resp := d.ProcessLLMResponse(context.Background(), output)
	if len(resp.Calls) == 0 {
		t.Fatalf("no call in %v", output)
	}
	c := resp.Calls[len(resp.Calls)-1]
	return outcome{c.Result, c.Err}
}

const petstore = `{"openapi": "3.0.3", "info": {"title": "pets", "version": "1"},
"servers": [{"url": "http://127.0.0.1:1"}],
"paths": {"/pets/{id}": {"get": {"operationId": "getPet",
  "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
  "responses": {"200": {"description": "ok"}}}}}}`

// TestCodeOf runs every constructor of an error or a result of the module and
// checks the code CodeOf gives its outcome: from types only, so that look-alike
// text never counts.
func TestCodeOf(t *testing.T) {
	ctx := context.Background()
	plain := mcs.NewBaseDriver(tools{})
	limited := mcs.NewBaseDriver(tools{}, mcs.WithMaxCalls(1), mcs.WithMaxArgumentBytes(64))
	denyAll := mcs.NewBaseDriver(tools{}, mcs.WithMiddleware(permission.New(nil, permission.WithRules(permission.Deny("*")))))
	declined := mcs.NewBaseDriver(tools{}, mcs.WithMiddleware(permission.New(func(context.Context, string, map[string]any) (bool, error) { return false, nil })))
	noHandler := mcs.NewBaseDriver(tools{}, mcs.WithMiddleware(permission.New(nil)))
	challenge := &auth.Challenge{Message: "sign in", URL: "https://example.test/device", Code: "AB-CD", Scope: "github"}
	needsAuth := mcs.NewBaseDriver(mcs.NewBaseDriver(tools{}, mcs.WithMiddleware(mcs.ToolMiddlewareFunc(
		func(context.Context, string, map[string]any, mcs.CallNext) (any, error) {
			return nil, fmt.Errorf("token: %w", challenge)
		}))), mcs.WithMiddleware(auth.New()))
	validated := mcs.NewBaseDriver(tools{}, mcs.WithMiddleware(validate.New()))
	var hookErr error
	hooked := mcs.NewBaseDriver(tools{}, mcs.WithMiddleware(hooks.New(hooks.WithFailure(
		func(_ context.Context, _ string, _ map[string]any, err error) { hookErr = err }))))
	pets, err := rest.NewToolDriver(rest.Config{Spec: []byte(petstore)})
	if err != nil {
		t.Fatal(err)
	}
	pending := mcs.Signal{Kind: mcs.CodePending, Tool: "ok", Message: "a person is asked", Data: map[string]any{"id": "a1"}}
	canceled, cancel := context.WithCancel(ctx)
	cancel()

	tests := []struct {
		name string
		got  func(t *testing.T) outcome
		want mcs.Code
	}{
		// Successes.
		{"a result", func(t *testing.T) outcome { return call(t, plain, "ok", nil) }, mcs.CodeOK},
		{"no result", func(*testing.T) outcome { return outcome{} }, mcs.CodeOK},
		{"a look-alike map", func(*testing.T) outcome {
			return outcome{result: map[string]any{"permission_denied": true, "auth_required": true}}
		}, mcs.CodeOK},
		{"a look-alike text", func(*testing.T) outcome { return outcome{result: `{"permission_denied":true}`} }, mcs.CodeOK},
		{"a nil *Signal", func(*testing.T) outcome { return outcome{result: (*mcs.Signal)(nil)} }, mcs.CodeOK},
		{"a Signal of no kind", func(*testing.T) outcome { return outcome{result: mcs.Signal{Message: "x"}} }, mcs.CodeOK},

		// In-band signals.
		{"denied by a rule", func(t *testing.T) outcome { return call(t, denyAll, "ok", nil) }, mcs.CodeDenied},
		{"denied by the user", func(t *testing.T) outcome { return first(t, declined, `{"tool": "ok", "arguments": {}}`) }, mcs.CodeDenied},
		{"permission.Denied", func(*testing.T) outcome { return outcome{result: permission.Denied("t", "no")} }, mcs.CodeDenied},
		{"a *Signal", func(*testing.T) outcome { d := permission.Denied("t", "no"); return outcome{result: &d} }, mcs.CodeDenied},
		{"challenge result", func(t *testing.T) outcome { return call(t, needsAuth, "ok", nil) }, mcs.CodeChallenge},
		{"Challenge.Result", func(*testing.T) outcome { return outcome{result: challenge.Result()} }, mcs.CodeChallenge},
		{"nil Challenge.Result", func(*testing.T) outcome { return outcome{result: (*auth.Challenge)(nil).Result()} }, mcs.CodeChallenge},
		{"pending", func(*testing.T) outcome { return outcome{result: pending} }, mcs.CodePending},

		// Errors of the kernel.
		{"a plain error", func(t *testing.T) outcome { return call(t, plain, "fail", nil) }, mcs.CodeError},
		{"an error with a result", func(*testing.T) outcome { return outcome{pending, errors.New("x")} }, mcs.CodeError},
		{"unknown tool", func(t *testing.T) outcome { return call(t, plain, "nope", nil) }, mcs.CodeUnknownTool},
		{"unknown tool, wrapped", func(*testing.T) outcome {
			return outcome{err: fmt.Errorf("route: %w", fmt.Errorf("%w: x", mcs.ErrUnknownTool))}
		}, mcs.CodeUnknownTool},
		{"panic", func(t *testing.T) outcome { return call(t, plain, "explode", nil) }, mcs.CodePanic},
		{"panic in a reply", func(t *testing.T) outcome { return first(t, plain, `{"tool": "explode", "arguments": {}}`) }, mcs.CodePanic},
		{"PanicError, joined", func(*testing.T) outcome {
			return outcome{err: errors.Join(errors.New("a"), &mcs.PanicError{Op: "ListTools", Value: 1})}
		}, mcs.CodePanic},
		{"malformed text call", func(t *testing.T) outcome {
			return first(t, plain, "```json\n{\"tool\": \"ok\", \"arguments\": {\n```")
		}, mcs.CodeMalformedCall},
		{"malformed native arguments", func(t *testing.T) outcome {
			return first(t, plain, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"id": "c1", "type": "function", "function": map[string]any{"name": "ok", "arguments": "{not json"}}}})
		}, mcs.CodeMalformedCall},
		{"native arguments not an object", func(t *testing.T) outcome {
			return first(t, plain, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"id": "c1", "type": "function", "function": map[string]any{"name": "ok", "arguments": []any{1.0}}}}})
		}, mcs.CodeInvalidArguments},
		{"too many calls", func(t *testing.T) outcome {
			return last(t, limited, `{"tool": "ok", "arguments": {}} {"tool": "ok", "arguments": {}}`)
		}, mcs.CodeTooManyCalls},
		{"arguments too large", func(t *testing.T) outcome {
			return first(t, limited, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
				"id": "c1", "type": "function", "function": map[string]any{"name": "ok", "arguments": `{"text": "` + fmt.Sprintf("%0100d", 0) + `"}`}}}})
		}, mcs.CodeInvalidArguments},
		{"canceled", func(*testing.T) outcome { return outcome{err: fmt.Errorf("call: %w", canceled.Err())} }, mcs.CodeCanceled},
		{"timeout", func(*testing.T) outcome { return outcome{err: fmt.Errorf("call: %w", context.DeadlineExceeded)} }, mcs.CodeTimeout},
		{"unavailable", func(*testing.T) outcome {
			return outcome{err: &mcs.UnavailableError{Driver: "d", Err: context.DeadlineExceeded}}
		}, mcs.CodeTimeout},
		{"text that names a code", func(*testing.T) outcome { return outcome{err: errors.New("unknown tool: panic: timeout")} }, mcs.CodeError},

		// Errors of the middleware and drivers.
		{"validate", func(t *testing.T) outcome { return call(t, validated, "count", map[string]any{"n": "five"}) }, mcs.CodeInvalidArguments},
		{"validate.Check", func(*testing.T) outcome {
			_, err := validate.New().Check(mcs.Tool{Name: "t", Parameters: []mcs.Parameter{{Name: "n", Required: true}}}, nil)
			return outcome{err: err}
		}, mcs.CodeInvalidArguments},
		{"rest: unknown argument", func(t *testing.T) outcome { return call(t, pets, "getPet", map[string]any{"id": "1", "x": 1}) }, mcs.CodeInvalidArguments},
		{"rest: unknown operation", func(t *testing.T) outcome { return call(t, pets, "nope", nil) }, mcs.CodeUnknownTool},
		{"challenge error (inside the auth middleware)", func(*testing.T) outcome { return outcome{err: fmt.Errorf("x: %w", challenge)} }, mcs.CodeChallenge},
		{"nil challenge error", func(*testing.T) outcome { return outcome{err: (*auth.Challenge)(nil)} }, mcs.CodeChallenge},
		{"no consent handler", func(t *testing.T) outcome { return call(t, noHandler, "ok", nil) }, mcs.CodeError},
		{"consent timeout", func(*testing.T) outcome {
			return outcome{err: &permission.ConsentError{Tool: "t", Reason: permission.ReasonTimeout, Err: context.DeadlineExceeded}}
		}, mcs.CodeTimeout},
		{"auth: no credential", func(*testing.T) outcome { return outcome{err: fmt.Errorf("%w for github", auth.ErrNoCredential)} }, mcs.CodeError},
		{"hooks: the failure hooks' panic error", func(t *testing.T) outcome {
			call(t, hooked, "explode", nil)
			return outcome{err: hookErr}
		}, mcs.CodePanic},
		{"rest: status", func(*testing.T) outcome { return outcome{err: &rest.StatusError{StatusCode: 404, Reason: "Not Found"}} }, mcs.CodeError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.got(t)
			if got := mcs.CodeOf(o.result, o.err); got != tt.want {
				t.Errorf("CodeOf(%#v, %v) = %q, want %q", o.result, o.err, got, tt.want)
			}
		})
	}
}

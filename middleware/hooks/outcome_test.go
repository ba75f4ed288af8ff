package hooks_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/hooks"
	"github.com/mcs-go/mcs/middleware/permission"
)

// outcomeOf is the part of an audit record that says how a call ended.
type outcomeOf struct {
	Level, Outcome, Error string
	ApprovalID            string // the approval request's id, of a pending or denied signal
}

// TestAuditOutcomes runs real permission and auth middleware around and inside
// the audit hooks and checks that each way a call ends is recorded as such.
func TestAuditOutcomes(t *testing.T) {
	challenge := &auth.Challenge{Message: "sign in at the link", URL: "https://example.test/device", Scope: "github"}
	tests := []struct {
		name string
		// chain builds the call with the audit hooks a in place.
		chain func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext
		tool  func() (any, error)
		want  outcomeOf
	}{
		{
			name:  "ok",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext { return mcs.Chain(tool, a) },
			tool:  func() (any, error) { return "done", nil },
			want:  outcomeOf{Level: "INFO", Outcome: hooks.OutcomeOK},
		},
		{
			name:  "error",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext { return mcs.Chain(tool, a) },
			tool:  func() (any, error) { return nil, errors.New("disk on fire") },
			want:  outcomeOf{Level: "WARN", Outcome: hooks.OutcomeError, Error: "disk on fire"},
		},
		{
			name: "denied by a rule",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext {
				return mcs.Chain(tool, a, permission.New(nil, permission.WithRules(permission.Deny("*"))))
			},
			tool: func() (any, error) { return "must not run", nil },
			want: outcomeOf{Level: "WARN", Outcome: hooks.OutcomeDenied},
		},
		{
			name: "denied by the user",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext {
				no := func(context.Context, string, map[string]any) (bool, error) { return false, nil }
				return mcs.Chain(tool, a, permission.New(no))
			},
			tool: func() (any, error) { return "must not run", nil },
			want: outcomeOf{Level: "WARN", Outcome: hooks.OutcomeDenied},
		},
		{
			name: "challenge outside the auth middleware (in-band result)",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext {
				return mcs.Chain(tool, a, auth.New())
			},
			tool: func() (any, error) { return nil, fmt.Errorf("rest: credential: %w", challenge) },
			want: outcomeOf{Level: "WARN", Outcome: hooks.OutcomeChallenge},
		},
		{
			name: "challenge inside the auth middleware (the error)",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext {
				return mcs.Chain(tool, auth.New(), a)
			},
			tool: func() (any, error) { return nil, fmt.Errorf("rest: credential: %w", challenge) },
			want: outcomeOf{Level: "WARN", Outcome: hooks.OutcomeChallenge,
				Error: "rest: credential: authentication required: sign in at the link"},
		},
		{
			name:  "look-alike results are not denials or challenges",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext { return mcs.Chain(tool, a) },
			tool: func() (any, error) {
				return map[string]any{"permission_denied": "true", "auth_required": false}, nil
			},
			want: outcomeOf{Level: "INFO", Outcome: hooks.OutcomeOK},
		},
		{
			name:  "pending approval",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext { return mcs.Chain(tool, a) },
			tool: func() (any, error) {
				return mcs.Signal{Kind: mcs.CodePending, Tool: "t", Message: "asked", Data: map[string]any{"id": "a1"}}, nil
			},
			want: outcomeOf{Level: "WARN", Outcome: hooks.OutcomePending, ApprovalID: "a1"},
		},
		{
			name:  "denied with the approval's id",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext { return mcs.Chain(tool, a) },
			tool: func() (any, error) {
				return &mcs.Signal{Kind: mcs.CodeDenied, Tool: "t", Message: "no", Data: map[string]any{"id": "a2"}}, nil
			},
			want: outcomeOf{Level: "WARN", Outcome: hooks.OutcomeDenied, ApprovalID: "a2"},
		},
		{
			name:  "an id of an ok result is not an approval",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext { return mcs.Chain(tool, a) },
			tool: func() (any, error) {
				return mcs.Signal{Kind: mcs.CodeOK, Data: map[string]any{"id": "a3"}}, nil
			},
			want: outcomeOf{Level: "INFO", Outcome: hooks.OutcomeOK},
		},
		{
			name: "a panic reaches the failure hooks as a panic",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext {
				return mcs.NewBaseDriver(panicky{tool}, mcs.WithMiddleware(a)).ExecuteTool
			},
			tool: func() (any, error) { panic("boom") },
			want: outcomeOf{Level: "WARN", Outcome: hooks.OutcomeError, Error: `tool "t" panicked: boom`},
		},
		{
			name:  "a denial the tool itself returns",
			chain: func(a mcs.ToolMiddleware, tool mcs.CallNext) mcs.CallNext { return mcs.Chain(tool, a) },
			tool:  func() (any, error) { return permission.Denied("t", "no"), nil },
			want:  outcomeOf{Level: "WARN", Outcome: hooks.OutcomeDenied},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := func(context.Context, string, map[string]any) (any, error) { return tt.tool() }

			var buf bytes.Buffer
			logged := hooks.New(hooks.WithSet(hooks.SlogAudit(slog.New(slog.NewJSONHandler(&buf, nil)))))
			tt.chain(logged, tool)(context.Background(), "t", map[string]any{"q": "x"})
			lines := decodeLines(t, buf.Bytes())
			if len(lines) != 1 {
				t.Fatalf("slog: %d records, want 1: %s", len(lines), buf.Bytes())
			}
			got := outcomeOf{Level: str(lines[0]["level"]), Outcome: str(lines[0]["outcome"]), Error: str(lines[0]["error"]), ApprovalID: str(lines[0]["approval_id"])}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("slog record (-want +got):\n%s", diff)
			}

			path := filepath.Join(t.TempDir(), "audit.jsonl")
			f, err := hooks.OpenAuditFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tt.chain(hooks.New(hooks.WithSet(f.Hooks())), tool)(context.Background(), "t", map[string]any{"q": "x"})
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			lines = readAuditFile(t, path)
			if len(lines) != 1 {
				t.Fatalf("file: %d lines, want 1", len(lines))
			}
			want := tt.want
			want.Level = ""
			got = outcomeOf{Outcome: str(lines[0]["outcome"]), Error: str(lines[0]["error"]), ApprovalID: str(lines[0]["approval_id"])}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("file line (-want +got):\n%s", diff)
			}
		})
	}
}

// panicky is a tool driver whose one tool is tool.
type panicky struct{ tool mcs.CallNext }

func (panicky) Meta() mcs.Meta { return mcs.Meta{ID: "test/panicky", Name: "panicky", Version: "1"} }
func (panicky) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "t", Description: "d"}}, nil
}
func (p panicky) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	return p.tool(ctx, name, args)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

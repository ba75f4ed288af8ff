package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// failureResult is a result that reports a failure code of its own.
type failureResult struct{ Why string }

func (failureResult) Code() mcs.Code { return mcs.CodeError }

// Every outcome code is answered as the table says, whatever the error's text.
func TestAnswers(t *testing.T) {
	denial := mcs.Signal{Kind: mcs.CodeDenied, Tool: "rm", Message: "no"}
	tests := []struct {
		name    string
		result  any
		err     error
		rpc     int64  // a JSON-RPC error with this code
		text    string // else the result's text
		isError bool
	}{
		{name: "ok", result: "done", text: "done"},
		{name: "denied", result: denial, text: `{"message":"no","permission_denied":true,"tool":"rm"}`},
		{name: "challenge", result: &mcs.Signal{Kind: mcs.CodeChallenge, Message: "sign in"}, text: `{"auth_required":true,"message":"sign in"}`},
		{name: "pending", result: mcs.Signal{Kind: mcs.CodePending, Tool: "rm", Message: "asked", Data: map[string]any{"id": "a1"}},
			text: `{"approval_pending":true,"id":"a1","message":"asked","tool":"rm"}`},
		{name: "unknown tool", err: fmt.Errorf("%w: gone", mcs.ErrUnknownTool), rpc: jsonrpc.CodeInvalidParams},
		{name: "invalid arguments", err: &mcs.ArgumentsError{Tool: "rm", Problems: []string{"/a: want string"}},
			text: "rm: invalid arguments: /a: want string", isError: true},
		{name: "panic", err: &mcs.PanicError{Tool: "rm", Value: "boom"}, text: `tool "rm" panicked: boom`, isError: true},
		{name: "timeout", err: context.DeadlineExceeded, text: "context deadline exceeded", isError: true},
		{name: "plain error", err: errors.New("unknown tool"), text: "unknown tool", isError: true},
		{name: "a result reporting a failure", result: failureResult{"x"}, text: `{"Why":"x"}`, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := answer("rm", tt.result, tt.err)
			if tt.rpc != 0 {
				var re *jsonrpc.Error
				if !errors.As(err, &re) || re.Code != tt.rpc || res != nil {
					t.Fatalf("answer = %v, %v; want JSON-RPC error %d", res, err, tt.rpc)
				}
				return
			}
			if err != nil || res == nil || len(res.Content) != 1 {
				t.Fatalf("answer = %v, %v; want a tool result", res, err)
			}
			got := struct {
				Text    string
				IsError bool
			}{res.Content[0].(*mcpsdk.TextContent).Text, res.IsError}
			want := struct {
				Text    string
				IsError bool
			}{tt.text, tt.isError}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
	for _, c := range []mcs.Code{mcs.CodeOK, mcs.CodeError, mcs.CodeUnknownTool, mcs.CodeInvalidArguments, mcs.CodeMalformedCall,
		mcs.CodeTooManyCalls, mcs.CodePanic, mcs.CodeCanceled, mcs.CodeTimeout, mcs.CodeDenied, mcs.CodeChallenge, mcs.CodePending} {
		if _, ok := answers[c]; !ok {
			t.Errorf("the answer table has no row for %q", c)
		}
	}
}

package mcs_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/mcs-go/mcs"
)

func TestSignalJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		s    mcs.Signal
		want string
	}{
		{"denied, empty fields kept", mcs.Signal{Kind: mcs.CodeDenied}, `{"message":"","permission_denied":true,"tool":""}`},
		{"challenge, empty fields left out", mcs.Signal{Kind: mcs.CodeChallenge}, `{"auth_required":true}`},
		{"pending", mcs.Signal{Kind: mcs.CodePending, Tool: "t", Message: "m", Data: map[string]any{"id": "a"}},
			`{"approval_pending":true,"id":"a","message":"m","tool":"t"}`},
		{"the kind's keys win over Data", mcs.Signal{Kind: mcs.CodeDenied, Tool: "t", Message: "m",
			Data: map[string]any{"permission_denied": false, "tool": "x", "extra": 1}},
			`{"extra":1,"message":"m","permission_denied":true,"tool":"t"}`},
		{"another kind", mcs.Signal{Kind: mcs.CodeTooManyCalls, Message: "wait"}, `{"code":"too_many_calls","message":"wait"}`},
		{"HTML escaped as in a map", mcs.Signal{Kind: mcs.CodeChallenge, Message: "<a&b>"}, `{"auth_required":true,"message":"\u003ca\u0026b\u003e"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.s)
			if err != nil || string(b) != tt.want {
				t.Errorf("json.Marshal = %s, %v; want %s", b, err, tt.want)
			}
			if got := mcs.ResultText(tt.s); got != tt.want {
				t.Errorf("ResultText = %s, want %s", got, tt.want)
			}
		})
	}
	bad := mcs.Signal{Kind: mcs.CodeDenied, Message: "m", Data: map[string]any{"x": math.NaN()}}
	if _, err := json.Marshal(bad); err == nil {
		t.Error("a Signal with a NaN encoded without error")
	}
	if got := fmt.Sprint(bad); got != "denied: m" {
		t.Errorf("String of an unencodable Signal = %q", got)
	}
}

func TestCloneValueCopiesSignalData(t *testing.T) {
	s := mcs.Signal{Kind: mcs.CodePending, Data: map[string]any{"id": "a"}}
	c := mcs.CloneValue(s).(mcs.Signal)
	c.Data["id"] = "b"
	p := mcs.CloneValue(&s).(*mcs.Signal)
	p.Data["id"] = "c"
	if s.Data["id"] != "a" {
		t.Errorf("a copy shares Data with the original: %v", s.Data)
	}
	if mcs.CloneValue((*mcs.Signal)(nil)).(*mcs.Signal) != nil {
		t.Error("a nil *Signal was not copied as nil")
	}
}

// coded is an error or result of another package that knows its code.
type coded mcs.Code

func (c coded) Code() mcs.Code { return mcs.Code(c) }
func (c coded) Error() string  { return "coded " + string(c) }

func TestCodeOfCoders(t *testing.T) {
	for _, tt := range []struct {
		name   string
		result any
		err    error
		want   mcs.Code
	}{
		{"a Coder error", nil, coded("quota"), "quota"},
		{"a wrapped Coder error wins over a sentinel", nil, fmt.Errorf("%w: %w", mcs.ErrUnknownTool, coded(mcs.CodeTimeout)), mcs.CodeTimeout},
		{"a Coder that says nothing", nil, fmt.Errorf("%w: %w", coded(""), mcs.ErrUnknownTool), mcs.CodeUnknownTool},
		{"a Coder result", coded(mcs.CodeDenied), nil, mcs.CodeDenied},
		{"a Coder result that says nothing", coded(""), nil, mcs.CodeOK},
		{"an error as a result is a result", errors.New("x"), nil, mcs.CodeOK},
	} {
		if got := mcs.CodeOf(tt.result, tt.err); got != tt.want {
			t.Errorf("%s: CodeOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

package tools_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
)

// A 64-bit id the model writes as a number reaches an int64 field digit for digit.
func TestBigIntegerReachesInt64Field(t *testing.T) {
	type Get struct {
		ID int64 `json:"id"`
	}
	var got int64
	tb := tools.New(mcs.Meta{ID: "test/ids", Name: "IDs"})
	tools.Add(tb, "get", "Gets one record.", func(_ context.Context, in Get) (string, error) {
		got = in.ID
		return "ok", nil
	})
	r := mcs.NewBaseDriver(tb).ProcessLLMResponse(context.Background(), `{"tool": "get", "arguments": {"id": 1234567890123456789}}`)
	if !r.CallExecuted {
		t.Fatalf("the call did not run: %+v", r.Calls)
	}
	if got != 1234567890123456789 {
		t.Errorf("id = %d, want 1234567890123456789", got)
	}
}

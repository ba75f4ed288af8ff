package rest

import (
	"context"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/validate"
)

// A 64-bit id the model writes as a number reaches the API digit for digit, through
// validation, instead of rounded to the nearest float64 (...768).
func TestBigIntegerIDReachesTheAPI(t *testing.T) {
	api := newAPI(t, nil)
	d, err := New(Config{Spec: fixture(t, "openapi31.yaml"), BaseURL: api.URL, NoCache: true},
		mcs.WithMiddleware(validate.New()))
	if err != nil {
		t.Fatal(err)
	}
	r := d.ProcessLLMResponse(context.Background(), `{"tool": "getNote", "arguments": {"id": 1234567890123456789}}`)
	if !r.CallExecuted {
		t.Fatalf("the call did not run: %+v", r.Calls)
	}
	reqs := api.requests()
	if len(reqs) != 1 || !strings.HasSuffix(reqs[0].URI, "/notes/1234567890123456789") {
		t.Fatalf("the API received %+v, want GET .../notes/1234567890123456789", reqs)
	}
}

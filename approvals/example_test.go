package approvals_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
)

// A call waits as a pending request; a person approves it, elsewhere; the call
// then claims the approval and runs, once.
func Example() {
	ctx := context.Background()
	store := approvals.NewMemoryStore() // sqlite.Open("approvals.db") for a durable one
	defer store.Close()

	tool := mcs.Tool{Name: "delete_file", Parameters: []mcs.Parameter{{Name: "path", Required: true}}}
	args := map[string]any{"path": "notes.txt"}
	fp := approvals.Fingerprint("files", tool, args)

	// The call needs a person: it creates a request and waits.
	req, err := store.Create(ctx, approvals.Request{
		Label: "files", Tool: tool.Name, Arguments: args, Fingerprint: fp,
		Expires: time.Now().Add(24 * time.Hour),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("waiting:", req.State)

	// Before a decision there is nothing to claim.
	_, ok, _ := store.Claim(ctx, fp)
	fmt.Println("claimed before the decision:", ok)

	// Someone approves it, in another process or minutes later.
	decided, _ := store.Decide(ctx, req.ID, approvals.Decision{Approve: true, By: "alice"})
	fmt.Println("decided:", decided.State, "by", decided.Decision.By)
	_, err = store.Decide(ctx, req.ID, approvals.Decision{Approve: false, By: "bob"})
	fmt.Println("deciding again is", errors.Is(err, approvals.ErrDecided))

	// The same call again claims the approval and runs; a third time finds none.
	claimed, ok, _ := store.Claim(ctx, fp)
	fmt.Println("claimed:", ok, claimed.ID == req.ID, claimed.State)
	_, ok, _ = store.Claim(ctx, fp)
	fmt.Println("claimed again:", ok)
	// Output:
	// waiting: pending
	// claimed before the decision: false
	// decided: approved by alice
	// deciding again is true
	// claimed: true true used
	// claimed again: false
}

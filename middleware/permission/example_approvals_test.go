package permission_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/middleware/permission"
)

// A call no rule decides waits for a person's approval in a store; once
// approved, the same call runs, once.
func ExampleWithApprovals() {
	store := approvals.NewMemoryStore() // sqlite.Open("approvals.db") to keep them
	m := permission.New(nil,
		permission.WithRules(permission.Allow("read_*")),
		permission.WithApprovals(store, time.Hour),
	)
	d := mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(m))
	ctx := context.Background()
	args := map[string]any{"path": "notes.txt"}

	res, _ := d.ExecuteTool(ctx, "delete_file", args)
	id := res.(mcs.Signal).Data["id"].(string)
	fmt.Println(mcs.CodeOf(res, nil))
	fmt.Println("model reads:", strings.ReplaceAll(fmt.Sprint(res), id, "<id>"))

	res, _ = d.ExecuteTool(ctx, "delete_file", args)
	fmt.Println("asked again, same id:", res.(mcs.Signal).Data["id"] == id)

	// Elsewhere, later: a person decides.
	if _, err := store.Decide(ctx, id, approvals.Decision{Approve: true, By: "alice"}); err != nil {
		fmt.Println(err)
	}
	fmt.Println(d.ExecuteTool(ctx, "delete_file", args))
	r, _ := store.Get(ctx, id)
	fmt.Println("request:", r.State)

	res, _ = d.ExecuteTool(ctx, "delete_file", args)
	fmt.Println("once more:", mcs.CodeOf(res, nil), "with a new id:", res.(mcs.Signal).Data["id"] != id)
	// Output:
	// pending
	// model reads: {"approval_pending":true,"id":"<id>","message":"The call to 'delete_file' did not run: it waits for a person's approval, under the approval id <id>. Tell the user that it waits for approval and give them the id. Do not call it again until the user says it was approved.","tool":"delete_file"}
	// asked again, same id: true
	// delete_file notes.txt: done <nil>
	// request: used
	// once more: pending with a new id: true
}

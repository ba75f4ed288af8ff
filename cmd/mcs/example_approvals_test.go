package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var timePattern = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+`)

// Example_approvals walks a call that waits for approval through the store of
// a stack with ask = "queue": mcs call exits 3 with the id, mcs approvals
// approve decides, and the call then runs once. Stdout and stderr are shown
// together; ids and times are replaced,
// columns joined by one space and the run's result cut to one line, for the
// comparison.
func Example_approvals() {
	dir, err := os.MkdirTemp("", "mcs-approvals-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	_ = os.Mkdir(filepath.Join(dir, "data"), 0o700)
	_ = os.WriteFile(filepath.Join(dir, "data", "pets.csv"), []byte("name,species\nRex,dog\nMimi,cat\n"), 0o600)
	file := filepath.Join(dir, "mcs.toml")
	_ = os.WriteFile(file, []byte(queueStack), 0o600)

	var id string
	mcs := func(keep string, args ...string) {
		var out bytes.Buffer
		code := run(context.Background(), append([]string{"--stack", file}, args...), strings.NewReader(""), &out, &out)
		if id == "" {
			id = idPattern.FindString(out.String())
		}
		fmt.Printf("$ mcs %s  (exit code %d)\n", strings.ReplaceAll(strings.Join(args, " "), id, "ID"), code)
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if line == "" || !strings.Contains(line, keep) {
				continue
			}
			line = timePattern.ReplaceAllString(strings.ReplaceAll(line, id, "ID"), "TIME")
			fmt.Println(strings.Join(strings.Fields(line), " "))
		}
	}
	mcs("", "call", "shelter__describe_csv", "path=pets.csv")
	mcs("", "approvals", "list")
	mcs("", "approvals", "approve", id, "--by", "alice", "--reason", "checked")
	mcs("row_count", "approvals", "run", id) // or the same call again
	mcs("", "approvals", "run", id)
	mcs("", "approvals", "list", "--state", "used")
	// Output:
	// $ mcs call shelter__describe_csv path=pets.csv  (exit code 3)
	// {
	// "approval_pending": true,
	// "id": "ID",
	// "message": "The call to 'shelter__describe_csv' did not run: it waits for a person's approval, under the approval id ID. Tell the user that it waits for approval and give them the id. Do not call it again until the user says it was approved.",
	// "tool": "shelter__describe_csv"
	// }
	// mcs: shelter__describe_csv waits for approval ID: it did not run; approve it with mcs approvals approve ID, then call it again (it runs once), or run it with mcs approvals run ID
	// $ mcs approvals list  (exit code 0)
	// ID STATE TOOL EXPIRES ARGUMENTS
	// ID pending shelter__describe_csv TIME {"path":"pets.csv"}
	// $ mcs approvals approve ID --by alice --reason checked  (exit code 0)
	// approved ID: shelter__describe_csv {"path":"pets.csv"}
	// mcs: the same call now runs once; or run it now with mcs approvals run ID
	// $ mcs approvals run ID  (exit code 0)
	// "row_count": 2,
	// $ mcs approvals run ID  (exit code 1)
	// mcs: approval request ID was used: its call ran once already, and an approval runs one call; the same call made again asks anew
	// $ mcs approvals list --state used  (exit code 0)
	// ID STATE TOOL EXPIRES ARGUMENTS
	// ID used shelter__describe_csv TIME {"path":"pets.csv"}
}

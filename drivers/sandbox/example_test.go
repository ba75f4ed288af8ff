package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcs-go/mcs/drivers/sandbox"
)

// The model writes a script, runs it, and tries to reach the network.
func Example() {
	ws, err := os.MkdirTemp("", "mcs-sandbox-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	if os.Geteuid() == 0 {
		// As root, commands run as the workspace's owner, who must not be root.
		os.Chown(ws, 65534, 65534)
	}

	d, err := sandbox.New(sandbox.Config{Workspace: ws})
	if err != nil {
		fmt.Println("no sandbox here:", err)
		return
	}
	defer d.Close()
	ctx := context.Background()
	for _, reply := range []string{
		`{"tool":"write_file","arguments":{"path":"hello.sh","content":"echo hello from $(id -un)\n"}}`,
		`{"tool":"run_command","arguments":{"command":"sh hello.sh"}}`,
		`{"tool":"run_command","arguments":{"command":"cat /proc/net/dev | tail -n +3 | cut -d: -f1"}}`,
	} {
		for _, c := range d.ProcessLLMResponse(ctx, reply).Calls {
			if c.Err != nil {
				fmt.Println(c.Name, "failed:", c.Err)
				continue
			}
			b, _ := json.Marshal(c.Result)
			fmt.Println(c.Name, string(b))
		}
	}
	// Output:
	// write_file {"bytes_written":26,"created":true,"path":"hello.sh"}
	// run_command {"exit_code":0,"stdout":"hello from sandbox\n","stderr":"","timed_out":false,"truncated":false}
	// run_command {"exit_code":0,"stdout":"    lo\n","stderr":"","timed_out":false,"truncated":false}
}

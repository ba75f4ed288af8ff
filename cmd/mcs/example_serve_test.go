package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve-mcp over stdio, as an MCP host starts it: here the host is a client of
// the MCP SDK on the other end of two pipes. The stack is a directory given
// with --fs.
func Example_serveMCP() {
	dir, _ := os.MkdirTemp("", "mcs-serve-")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the stack\n"), 0o600)

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"--fs", dir, "serve-mcp"}, stdinR, stdoutW, io.Discard)
		stdoutW.Close()
		done <- code
	}()
	client := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcpsdk.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	tools, _ := cs.ListTools(context.Background(), nil)
	fmt.Println("tools:", len(tools.Tools))
	for _, args := range []map[string]any{{"path": "hello.txt"}, {"path": "hello.txt", "offset": "ten"}} {
		res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "read_file", Arguments: args})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("isError=%v %s\n", res.IsError, res.Content[0].(*mcpsdk.TextContent).Text)
	}
	cs.Close() // the host goes away: end of input, the command returns
	fmt.Println("exit code", <-done)
	// Output:
	// tools: 4
	// isError=false {"content":"hello from the stack\n","encoding":"utf-8","offset":0,"path":"hello.txt","size":21,"truncated":false}
	// isError=true read_file: invalid arguments: /offset: want integer, got string "ten"
	// exit code 0
}

// A call whose arguments break the tool's schema does not run: exit code 1,
// one line per problem on stderr.
func Example_callInvalidArguments() {
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"call", "pets__findPetsByStatus", "--args", `{"limit": "many", "colour": "red"}`},
		strings.NewReader(""), io.Discard, &stderr)
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "mcs: ") && !strings.Contains(line, "embedded demo") {
			fmt.Println(line)
		}
	}
	fmt.Println("exit code", code)
	// Output:
	// mcs: pets__findPetsByStatus was not run: 3 problems with its arguments; fix them and call again:
	// mcs:   /colour: unknown argument; "pets__findPetsByStatus" takes status, limit
	// mcs:   /limit: want integer, got string "many"
	// mcs:   /status: required argument is missing
	// exit code 1
}

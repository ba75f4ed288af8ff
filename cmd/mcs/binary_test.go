package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// buildBinary builds the mcs command into a temporary directory.
func buildBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcs")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinary runs the built command as a user would: the demo call of the
// README, a permission question answered from piped stdin, and a broken stack
// file.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t)
	dir := t.TempDir()

	runBin := func(stdin string, env []string, args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := runBin("", []string{"MCS_TOKEN_PETS="}, "call", "pets__findPetsByStatus", "status=available")
	if code != 0 || !strings.Contains(out, `"name": "Mimi"`) || !strings.Contains(errOut, "using the embedded demo") {
		t.Errorf("demo call: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	out, errOut, code = runBin("y\n", []string{"MCS_TOKEN_PETS=demo-key"}, "call", "pets__addPet", "name=Luna")
	if code != 0 || !strings.Contains(out, `"name": "Luna"`) || !strings.Contains(errOut, "Allow it?") {
		t.Errorf("asked write: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// Ctrl-C in the inspector: it leaves, the demo is cleaned up, exit 130.
	inspect := exec.Command(bin, "inspect")
	inspect.Dir = dir
	inspectIn, err := inspect.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	inspectOut, err := inspect.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := inspect.Start(); err != nil {
		t.Fatal(err)
	}
	prompt := make([]byte, 0, 4096)
	for !bytes.Contains(prompt, []byte("mcs> ")) {
		buf := make([]byte, 512)
		n, err := inspectOut.Read(buf)
		if err != nil {
			t.Fatalf("inspect: no prompt (%v): %q", err, prompt)
		}
		prompt = append(prompt, buf[:n]...)
	}
	if err := inspect.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = inspect.Wait()
	inspectIn.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("inspect after Ctrl-C: %v, want exit code %d", err, exitInterrupted)
	}

	if err := os.WriteFile(filepath.Join(dir, "mcs.toml"), []byte("[[driver]]\nlabel = \"x\"\ntype = \"soap\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runBin("", nil, "tools")
	if code != 2 || !strings.Contains(errOut, `mcs.toml:3: [[driver]] "x", key "type": unknown driver type "soap"`) {
		t.Errorf("broken stack: exit %d\nstderr:\n%s", code, errOut)
	}

	// serve-mcp as an MCP host runs it: a child over stdio.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("served over MCP\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(bin, "--fs", dir, "serve-mcp")
	var serveErr bytes.Buffer
	serve.Stderr = &serveErr
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "host", Version: "1"}, nil).
		Connect(context.Background(), &mcpsdk.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatalf("connect to mcs serve-mcp: %v\nstderr:\n%s", err, serveErr.String())
	}
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "notes.txt"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcpsdk.TextContent).Text, "served over MCP") {
		t.Errorf("read_file over stdio: %+v, %v", res, err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close the session: %v (stderr:\n%s)", err, serveErr.String())
	}

	// serve-mcp --http stops cleanly on SIGTERM.
	httpServe := exec.Command(bin, "--fs", dir, "serve-mcp", "--http", "127.0.0.1:0")
	stderr, err := httpServe.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := httpServe.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "mcs: serving MCP on http://127.0.0.1:") {
		t.Fatalf("serve-mcp --http: first line %q", lines.Text())
	}
	endpoint, _, _ := strings.Cut(strings.TrimPrefix(lines.Text(), "mcs: serving MCP on "), " ")
	cs, err = mcpsdk.NewClient(&mcpsdk.Implementation{Name: "host", Version: "1"}, nil).
		Connect(context.Background(), &mcpsdk.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("list over HTTP: %v", err)
	}
	if err := httpServe.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var tail strings.Builder
	for lines.Scan() {
		tail.WriteString(lines.Text() + "\n")
	}
	if err := httpServe.Wait(); err != nil || !strings.Contains(tail.String(), "mcs: stopped serving MCP") {
		t.Errorf("after SIGTERM: %v\nstderr:\n%s", err, tail.String())
	}
	cs.Close()
}

// TestBinaryApprovals runs the approval round trip through the built command,
// each step a process of its own sharing the SQLite store: a call waits (exit
// 3, an id), another process approves it, the same call runs once, and a third
// identical call waits again under a new id. The same stack served over stdio
// queues the calls of an MCP client: nothing reads the terminal.
func TestBinaryApprovals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t)
	file := writeQueueStack(t)
	runBin := func(args ...string) result {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--stack", file}, args...)...)
		cmd.Dir = t.TempDir()
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{stdout: out.String(), stderr: errOut.String(), code: code}
	}
	call := []string{"call", "shelter__describe_csv", "path=pets.csv"}

	r := runBin(call...)
	if r.code != 3 {
		t.Fatalf("first call: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	id := pendingOf(t, r.stdout)
	if !strings.Contains(r.stderr, "waits for approval "+id) {
		t.Errorf("first call: stderr does not name the id %s:\n%s", id, r.stderr)
	}

	if r := runBin("approvals", "approve", id, "--reason", "end to end"); r.code != 0 {
		t.Fatalf("approve: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	r = runBin(call...)
	if r.code != 0 || !strings.Contains(r.stdout, `"row_count": 2`) {
		t.Fatalf("approved call: exit %d, want 0 and the result\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	r = runBin(call...)
	if r.code != 3 {
		t.Fatalf("third call: exit %d, want 3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if again := pendingOf(t, r.stdout); again == id {
		t.Errorf("third call answered the used request %s; want a new one", id)
	}

	r = runBin("approvals", "list", "--json")
	var list []struct{ ID, State string }
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 2 || list[1].ID != id || list[1].State != "used" || list[0].State != "pending" {
		t.Errorf("list after the round trip: %v\n%s", err, r.stdout)
	}

	serve := exec.Command(bin, "--stack", file, "serve-mcp")
	var serveErr bytes.Buffer
	serve.Stderr = &serveErr
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "host", Version: "1"}, nil).
		Connect(context.Background(), &mcpsdk.CommandTransport{Command: serve}, nil)
	if err != nil {
		t.Fatalf("connect to mcs serve-mcp: %v\nstderr:\n%s", err, serveErr.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "archive__describe_csv", Arguments: map[string]any{"path": "pets.csv"}})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("call over stdio: %+v, %v\nstderr:\n%s", res, err, serveErr.String())
	}
	text, _ := res.Content[0].(*mcpsdk.TextContent)
	if text == nil || !strings.Contains(text.Text, `"approval_pending":true`) {
		t.Errorf("call over stdio: %+v; want a pending result", res.Content[0])
	}
}

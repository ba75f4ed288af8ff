//go:build unix

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/npmpeer"
	"github.com/mcs-go/mcs/middleware/permission"
)

// inspector runs the MCP Inspector's CLI with args and returns its output; it
// must exit with 0.
func inspector(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return inspectorExit(t, dir, 0, args...)
}

// inspectorExit runs the Inspector's CLI, which must exit with code.
func inspectorExit(t *testing.T, dir string, code int, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npmpeer.Node(t), append([]string{npmpeer.Script(dir, npmpeer.Inspector, "clients/launcher/build/index.js"), "--cli"}, args...)...)
	cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+t.TempDir()+"/mcp.json")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == code {
		return out.String()
	}
	if err != nil || code != 0 {
		t.Fatalf("inspector %v: %v\nstdout: %s\nstderr: %s", args, err, out.String(), errOut.String())
	}
	return out.String()
}

func inspectorPeer(t *testing.T) string {
	return npmpeer.Install(t, npmpeer.Clients...)
}

// checkInspector lists and calls through the Inspector against target.
func checkInspector(t *testing.T, dir string, target ...string) {
	t.Helper()
	out := inspector(t, dir, append(target, "--method", "tools/list")...)
	var list struct {
		Tools []struct {
			Name        string         `json:"name"`
			Title       string         `json:"title"`
			InputSchema map[string]any `json:"inputSchema"`
			Annotations map[string]any `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
	}
	found := false
	for _, tl := range list.Tools {
		if tl.Name == "greet" {
			found = true
			if tl.Title != "Greeter" || tl.Annotations["readOnlyHint"] != true || tl.InputSchema["type"] != "object" {
				t.Errorf("greet as the Inspector sees it: %+v", tl)
			}
		}
	}
	if !found || len(list.Tools) != 6 {
		t.Fatalf("tools/list: %s", out)
	}
	out = inspector(t, dir, append(target, "--method", "tools/call", "--tool-name", "greet", "--tool-arg", "name=Inspector")...)
	if !strings.Contains(out, "hello Inspector") {
		t.Errorf("tools/call greet: %s", out)
	}
	out = inspector(t, dir, append(target, "--method", "tools/call", "--tool-name", "remove_file", "--tool-arg", "path=/x")...)
	if !strings.Contains(out, "permission_denied") {
		t.Errorf("tools/call remove_file: %s; want the denial as a result", out)
	}
	// The Inspector exits with 5 for a result with isError.
	out = inspectorExit(t, dir, 5, append(target, "--method", "tools/call", "--tool-name", "broken")...)
	if !strings.Contains(out, "the backend is down") || !strings.Contains(out, `"isError": true`) {
		t.Errorf("tools/call broken: %s; want isError", out)
	}
}

func TestInspectorOverStdio(t *testing.T) {
	dir := inspectorPeer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	checkInspector(t, dir, "-e", stdioEnv+"=1", exe, "-test.run=^$")
}

func TestInspectorOverHTTP(t *testing.T) {
	dir := inspectorPeer(t)
	perm := permission.New(declining("remove_"))
	s := New(mcs.NewBaseDriver(&fake{}, mcs.WithMiddleware(perm)), WithLogger(quietLog()))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close()
	checkInspector(t, dir, ts.URL+"/mcp")
}

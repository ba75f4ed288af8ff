//go:build unix

package mcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/npmpeer"
)

func peers(t *testing.T) string {
	return npmpeer.Install(t, npmpeer.Servers...)
}

func TestServerEverythingStdio(t *testing.T) {
	dir := peers(t)
	d, err := New(testCtx(t), Config{
		Command: []string{npmpeer.Node(t), npmpeer.Script(dir, npmpeer.ServerEverything, "dist/index.js"), "stdio"},
		Logger:  discardLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	everything(t, d)
	if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthOK {
		t.Errorf("health = %+v", h)
	}
}

func TestServerEverythingStreamableHTTP(t *testing.T) {
	dir := peers(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(npmpeer.Node(t), npmpeer.Script(dir, npmpeer.ServerEverything, "dist/index.js"), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-testCtx(t).Done():
		t.Fatal("server-everything did not start")
	}
	d, err := New(testCtx(t), Config{URL: "http://127.0.0.1:" + port + "/mcp", Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	everything(t, d)
}

// everything checks the tools of server-everything that every transport has.
func everything(t *testing.T, d *Driver) {
	t.Helper()
	tools, err := d.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcs.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	for _, want := range []string{"echo", "get-sum", "get-tiny-image", "get-structured-content", "get-annotated-message"} {
		if _, ok := byName[want]; !ok {
			t.Fatalf("server-everything lists no %q; it lists %d tools: %v", want, len(tools), tools)
		}
	}
	if p := byName["echo"].Parameters; len(p) != 1 || p[0].Name != "message" || !p[0].Required {
		t.Errorf("echo parameters = %+v", p)
	}
	ctx := testCtx(t)
	resp := d.ProcessLLMResponse(ctx, `{"tool": "get-sum", "arguments": {"a": 2, "b": 40}}`)
	if !resp.CallExecuted || !strings.Contains(fmt.Sprint(resp.Calls[0].Result), "42") {
		t.Errorf("get-sum = %+v", resp)
	}
	got, err := d.ExecuteTool(ctx, "echo", map[string]any{"message": "hi there"})
	if err != nil || !strings.Contains(got.(string), "hi there") {
		t.Errorf("echo = %v, %v", got, err)
	}
	got, err = d.ExecuteTool(ctx, "get-tiny-image", nil)
	if err != nil || !strings.Contains(got.(string), "[image: image/png, ") {
		t.Errorf("get-tiny-image = %v, %v; want the image summarised", got, err)
	}
	if s, _ := got.(string); strings.Contains(s, "iVBOR") {
		t.Errorf("image data reached the result: %.200s", s)
	}
	got, err = d.ExecuteTool(ctx, "get-structured-content", map[string]any{"location": "New York"})
	if err != nil || !strings.Contains(fmt.Sprint(got), "temperature") {
		t.Errorf("get-structured-content = %v, %v", got, err)
	}
	_, err = d.ExecuteTool(ctx, "get-sum", map[string]any{"a": "two"})
	if err == nil {
		t.Error("get-sum with a string: no error")
	}
}

func TestServerFilesystem(t *testing.T) {
	dir := peers(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("remember the milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New(testCtx(t), Config{
		Command: []string{npmpeer.Node(t), npmpeer.Script(dir, npmpeer.ServerFilesystem, "dist/index.js"), root},
		Logger:  discardLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := d.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var readFile *mcs.Tool
	for i := range tools {
		if tools[i].Name == "read_text_file" {
			readFile = &tools[i]
		}
	}
	if readFile == nil || readFile.Annotations == nil || !readFile.Annotations.ReadOnly {
		t.Fatalf("read_text_file = %+v; want it listed read-only", readFile)
	}
	got, err := d.ExecuteTool(testCtx(t), "read_text_file", map[string]any{"path": filepath.Join(root, "notes.txt")})
	if err != nil || !strings.Contains(fmt.Sprint(got), "remember the milk") {
		t.Errorf("read_text_file = %v, %v", got, err)
	}
	_, err = d.ExecuteTool(testCtx(t), "read_text_file", map[string]any{"path": "/etc/passwd"})
	if err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("read outside the root: %v, want the server's refusal as a failed call", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_ = context.Background
}

//go:build unix

package mcp

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcs-go/mcs"
)

// childConfig runs this test binary as the stdio server in mode.
func childConfig(t *testing.T, mode string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{Command: []string{exe, "-test.run=^$"}, Env: []string{serverEnv + "=" + mode}, Logger: discardLogger()}
}

func pidOf(t *testing.T, d *ToolDriver) int {
	t.Helper()
	got, err := d.ExecuteTool(testCtx(t), "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(got.(string))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// gone reports whether no process has pid (it was reaped).
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestStdioServer(t *testing.T) {
	d, err := New(testCtx(t), childConfig(t, "serve"))
	if err != nil {
		t.Fatal(err)
	}
	resp := d.ProcessLLMResponse(testCtx(t), `{"tool": "echo", "arguments": {"message": "over stdio"}}`)
	if !resp.CallExecuted || resp.Calls[0].Result != "over stdio" {
		t.Fatalf("response = %+v", resp)
	}
	if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthOK || !strings.Contains(h.Detail, "tools") {
		t.Errorf("health = %+v", h)
	}
	pid := pidOf(t, d.td)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) {
		t.Errorf("process %d still exists after Close", pid)
	}
	if _, err := d.ExecuteTool(testCtx(t), "echo", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthError {
		t.Errorf("health after Close = %+v", h)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStdioServerKilledMidSession(t *testing.T) {
	d, err := NewToolDriver(testCtx(t), childConfig(t, "serve"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pid := pidOf(t, d)
	v := d.ToolsVersion()
	d.mu.Lock()
	s := d.sess
	d.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.ended
	<-s.procDone
	h := d.Healthcheck(testCtx(t))
	if h.Status != mcs.HealthError || !strings.Contains(h.Detail, "signal: killed") || !strings.Contains(h.Detail, "test server starting") {
		t.Errorf("health = %+v, want ERROR with the exit and the stderr", h)
	}
	// The next call connects again.
	pid2 := pidOf(t, d)
	if pid2 == pid {
		t.Errorf("same pid %d after reconnect", pid)
	}
	if d.ToolsVersion() <= v {
		t.Error("ToolsVersion did not increase after the reconnect")
	}
	if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthOK {
		t.Errorf("health after reconnect = %+v", h)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) || !gone(pid2) {
		t.Errorf("processes left: %d gone %v, %d gone %v", pid, gone(pid), pid2, gone(pid2))
	}
}

func TestStdioServerDiesDuringCall(t *testing.T) {
	d, err := NewToolDriver(testCtx(t), childConfig(t, "serve"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.ExecuteTool(testCtx(t), "crash", nil)
	if err == nil || !strings.Contains(err.Error(), "exit status 7") || !strings.Contains(err.Error(), "panic: crash tool called") || !strings.Contains(err.Error(), `command "`) {
		t.Fatalf("err = %v, want the exit status, the stderr and the command", err)
	}
	got, err := d.ExecuteTool(testCtx(t), "echo", map[string]any{"message": "back"})
	if err != nil || got != "back" {
		t.Errorf("call after the crash = %v, %v; want a reconnect", got, err)
	}
}

func TestStdioStartFailures(t *testing.T) {
	short := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	tests := []struct {
		name string
		cfg  func(t *testing.T) Config
		want []string
	}{
		{"missing program", func(*testing.T) Config {
			return Config{Command: []string{"mcs-no-such-program-x", "--flag"}}
		}, []string{`command "mcs-no-such-program-x --flag"`, "executable file not found"}},
		{"exits at start", func(t *testing.T) Config { return childConfig(t, "fail-start") },
			[]string{"command", "exit status 3", "cannot open the database"}},
		{"no handshake", func(t *testing.T) Config { return childConfig(t, "mute") },
			[]string{"command", "no answer to the handshake in time", "starting in mode mute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewToolDriver(short(t), tt.cfg(t))
			var ce *ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConnectError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

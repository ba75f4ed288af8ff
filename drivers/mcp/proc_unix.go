//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// isolate puts the child in its own process group, so that a terminal's
// interrupt does not reach it before the driver closes it, and Close can end
// the programs it started (npx starts node, for example).
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the child's process group; kill selects SIGKILL
// instead of SIGTERM.
func signalGroup(cmd *exec.Cmd, kill bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

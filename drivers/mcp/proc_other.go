//go:build !unix

package mcp

import "os/exec"

func isolate(*exec.Cmd) {}

// signalGroup ends the child; without process groups only the child itself.
func signalGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

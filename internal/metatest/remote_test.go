package metatest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/internal/sshtest"
	"github.com/mcs-go/mcs/mcstest"
)

// The drivers that run commands, and the SFTP one, pass the conformance kit
// (an honest Meta among its rules), without probes: their calls need a host.
func TestCommandDriversConform(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	conn := ssh.Conn{Addr: srv.Addr, User: srv.User, KnownHosts: srv.KnownHosts, Credential: srv.Password}
	drivers := map[string]func() (mcs.ToolDriver, error){
		"ssh tool driver": func() (mcs.ToolDriver, error) { return ssh.NewToolDriver(ssh.Config{Conn: conn}) },
		"ssh driver":      func() (mcs.ToolDriver, error) { return ssh.New(ssh.Config{Conn: conn}) },
		"sftp tool driver": func() (mcs.ToolDriver, error) {
			return ssh.NewSFTPToolDriver(ssh.SFTPConfig{Conn: conn, Root: t.TempDir()})
		},
		"sftp driver": func() (mcs.ToolDriver, error) { return ssh.NewSFTP(ssh.SFTPConfig{Conn: conn, Root: t.TempDir()}) },
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		ws := t.TempDir()
		if os.Geteuid() == 0 {
			if err := os.Chown(ws, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(ws+"/..", 0o755); err != nil {
				t.Fatal(err)
			}
		}
		drivers["sandbox tool driver"] = func() (mcs.ToolDriver, error) { return sandbox.NewToolDriver(sandbox.Config{Workspace: ws}) }
		drivers["sandbox driver"] = func() (mcs.ToolDriver, error) { return sandbox.New(sandbox.Config{Workspace: ws}) }
	}
	for name, newDriver := range drivers {
		d, err := newDriver()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c, ok := d.(interface{ Close() error }); ok {
			t.Cleanup(func() { c.Close() })
		}
		if err := mcstest.TestToolDriver(d); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

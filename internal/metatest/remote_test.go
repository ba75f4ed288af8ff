package metatest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/internal/sshtest"
)

// The drivers that run commands, and the SFTP one, are honest too.
func TestCommandDriversMetaIsHonest(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	conn := ssh.Conn{Addr: srv.Addr, User: srv.User, KnownHosts: srv.KnownHosts, Credential: srv.Password}
	drivers := map[string]func() (metaer, error){
		"ssh tool driver":  func() (metaer, error) { return ssh.NewToolDriver(ssh.Config{Conn: conn}) },
		"ssh driver":       func() (metaer, error) { return ssh.New(ssh.Config{Conn: conn}) },
		"sftp tool driver": func() (metaer, error) { return ssh.NewSFTPToolDriver(ssh.SFTPConfig{Conn: conn, Root: t.TempDir()}) },
		"sftp driver":      func() (metaer, error) { return ssh.NewSFTP(ssh.SFTPConfig{Conn: conn, Root: t.TempDir()}) },
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
		drivers["sandbox tool driver"] = func() (metaer, error) { return sandbox.NewToolDriver(sandbox.Config{Workspace: ws}) }
		drivers["sandbox driver"] = func() (metaer, error) { return sandbox.New(sandbox.Config{Workspace: ws}) }
	}
	for name, newDriver := range drivers {
		d, err := newDriver()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c, ok := d.(interface{ Close() error }); ok {
			t.Cleanup(func() { c.Close() })
		}
		checkHonest(t, name, d)
	}
}

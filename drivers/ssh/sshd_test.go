package ssh_test

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"

	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/internal/confine/confinetest"
	"github.com/mcs-go/mcs/internal/drivertest"
	"github.com/mcs-go/mcs/internal/filetools/filetoolstest"
	"github.com/mcs-go/mcs/internal/sshtest"
)

// startSSHD starts Debian's OpenSSH server on a free loopback port, with a
// configuration of its own that admits the current user with a new key, and
// returns how to reach it. It skips the test when sshd is not installed.
func startSSHD(t *testing.T) ssh.Conn {
	t.Helper()
	sshd := "/usr/sbin/sshd"
	if _, err := os.Stat(sshd); err != nil {
		t.Skip("OpenSSH's server is not installed (/usr/sbin/sshd); apt-get install openssh-server to run the tests against it")
	}
	if _, err := os.Stat("/run/sshd"); err != nil {
		// The privilege separation directory, which the Debian service creates.
		if os.Geteuid() != 0 {
			t.Skip("sshd needs /run/sshd, which only root can create")
		}
		if err := os.Mkdir("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove("/run/sshd") })
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, hostPriv, _ := ed25519.GenerateKey(rand.Reader)
	hostKey := write("host_key", sshtest.PEM(t, hostPriv, ""))
	_, userPriv, _ := ed25519.GenerateKey(rand.Reader)
	userSigner, err := gossh.NewSignerFromKey(userPriv)
	if err != nil {
		t.Fatal(err)
	}
	authorized := write("authorized_keys", string(gossh.MarshalAuthorizedKey(userSigner.PublicKey())))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	config := write("sshd_config", fmt.Sprintf(`ListenAddress %s
HostKey %s
AuthorizedKeysFile %s
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers %s
Subsystem sftp internal-sftp
LogLevel INFO
`, addr, hostKey, authorized, u.Username))
	cmd := exec.Command(sshd, "-D", "-e", "-f", config)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// sshd says when it listens.
	sc := bufio.NewScanner(stderr)
	var log []string
	for sc.Scan() {
		log = append(log, sc.Text())
		if strings.Contains(sc.Text(), "Server listening on") {
			break
		}
	}
	if len(log) == 0 || !strings.Contains(log[len(log)-1], "Server listening on") {
		t.Fatalf("sshd did not start:\n%s", strings.Join(log, "\n"))
	}
	go func() {
		for sc.Scan() {
			if strings.Contains(sc.Text(), "signal") || os.Getenv("MCS_SSHD_LOG") != "" {
				fmt.Fprintln(os.Stderr, "sshd:", sc.Text())
			}
		}
	}()
	hostSigner, err := gossh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	return ssh.Conn{Addr: addr, User: u.Username, KnownHosts: sshtest.KnownHosts(t, addr, hostSigner.PublicKey()), Credential: sshtest.PEM(t, userPriv, "")}
}

// The ssh and sftp drivers against OpenSSH.
func TestOpenSSH(t *testing.T) {
	conn := startSSHD(t)
	t.Run("run_command", func(t *testing.T) {
		td := drivertest.Open(t, ssh.NewToolDriver, ssh.Config{Conn: conn})
		canary := filepath.Join(t.TempDir(), "pwned")
		for _, a := range []string{"; touch " + canary, "$(touch " + canary + ")", "`touch " + canary + "`", "x\ntouch " + canary, "'\"; touch " + canary} {
			r := runArgs(t, td, map[string]any{"argv": []any{"printf", "%s", a}})
			if r.ExitCode != 0 || r.Stdout != a {
				t.Errorf("argument %q reached the program as %q (%+v)", a, r.Stdout, r)
			}
		}
		if _, err := os.Stat(canary); err == nil {
			t.Error("a quoted argument ran a command")
		}
	})
	t.Run("timeout ends the process group", func(t *testing.T) {
		cfg := ssh.Config{Conn: conn, Timeout: 1e9}
		td := drivertest.Open(t, ssh.NewToolDriver, cfg)
		marker := "4545.4545"
		r := runArgs(t, td, map[string]any{"argv": []any{"sh", "-c", "sleep " + marker + " & sleep " + marker + "; echo never"}})
		if !r.TimedOut {
			t.Fatalf("result %+v, want timed out", r)
		}
		if left := remaining(t, marker); len(left) > 0 {
			t.Errorf("processes remain after the timeout: %q", left)
		}
	})
	t.Run("sftp", func(t *testing.T) {
		env := confinetest.New(t)
		cfg := ssh.SFTPConfig{Conn: conn, Root: env.Root, AllowDelete: true}
		td := drivertest.Open(t, ssh.NewSFTPToolDriver, cfg)
		drivertest.Expect(t, td, "write_file", map[string]any{"path": "dir/x.txt", "content": "over sshd"}, map[string]any{"path": "dir/x.txt", "bytes_written": 9.0, "created": true}, "")
		drivertest.Expect(t, td, "write_file", map[string]any{"path": "dir/x.txt", "content": "again"}, map[string]any{"path": "dir/x.txt", "bytes_written": 5.0, "created": false}, "")
		if got := readFile(t, filepath.Join(env.Root, "dir/x.txt")); got != "again" {
			t.Errorf("file = %q", got)
		}
		drivertest.Expect(t, td, "delete_file", map[string]any{"path": "dir/x.txt"}, map[string]any{"path": "dir/x.txt", "deleted": true, "type": "file"}, "")
		filetoolstest.RunEscapes(t, env, td)
	})
}

// remaining lists the processes whose command line holds marker.
func remaining(t *testing.T, marker string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

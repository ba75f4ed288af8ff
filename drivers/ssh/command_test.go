package ssh_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gossh "golang.org/x/crypto/ssh"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/internal/drivertest"
	"github.com/mcs-go/mcs/internal/sshtest"
)

type result struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out"`
	Truncated bool   `json:"truncated"`
	Notice    string `json:"notice"`
}

func runArgs(t testing.TB, td mcs.ToolDriver, args map[string]any) result {
	t.Helper()
	res, err := td.ExecuteTool(context.Background(), "run_command", args)
	if err != nil {
		t.Fatalf("run_command %v: %v", args, err)
	}
	b, _ := json.Marshal(res)
	var r result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func passwordConfig(srv *sshtest.Server) ssh.Config {
	return ssh.Config{Conn: ssh.Conn{Addr: srv.Addr, User: srv.User, KnownHosts: srv.KnownHosts, Credential: srv.Password}}
}

func TestRunCommand(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	td := drivertest.Open(t, ssh.NewToolDriver, passwordConfig(srv))
	in := "line one\nline two\n"
	tests := []struct {
		name string
		args map[string]any
		want result
	}{
		{"stdout", map[string]any{"argv": []any{"echo", "hello", "world"}}, result{Stdout: "hello world\n"}},
		{"exit status and stderr", map[string]any{"argv": []any{"sh", "-c", "echo oops >&2; exit 7"}}, result{ExitCode: 7, Stderr: "oops\n"}},
		{"stdin", map[string]any{"argv": []any{"cat"}, "stdin": in}, result{Stdout: in}},
		{"no stdin", map[string]any{"argv": []any{"cat"}}, result{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runArgs(t, td, tc.args)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Arguments reach the program exactly as given: nothing in them is run by the
// remote shell.
func TestQuotingAttack(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	td := drivertest.Open(t, ssh.NewToolDriver, passwordConfig(srv))
	canary := filepath.Join(t.TempDir(), "pwned")
	attacks := []string{
		"; touch " + canary,
		"$(touch " + canary + ")",
		"`touch " + canary + "`",
		"x\ntouch " + canary,
		"' ; touch " + canary + " ; '",
		"'\"'\"'$(touch " + canary + ")",
		"&& touch " + canary,
		"| touch " + canary,
		"> " + canary,
		"*",
		"$HOME ${PATH} \\ \\n",
		"-n",
		"",
	}
	for _, a := range attacks {
		r := runArgs(t, td, map[string]any{"argv": []any{"printf", "%s|", a, a}})
		if r.ExitCode != 0 || r.Stdout != a+"|"+a+"|" {
			t.Errorf("argument %q reached the program as %q (exit %d, stderr %q)", a, r.Stdout, r.ExitCode, r.Stderr)
		}
	}
	// The program name itself is quoted too.
	r := runArgs(t, td, map[string]any{"argv": []any{"echo; touch " + canary}})
	if r.ExitCode != 127 {
		t.Errorf("a program name with a command in it: %+v", r)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("a quoted argument ran a command on the host")
	}
	// Every command line is the fixed prefix and the quoted argument vector.
	for _, line := range srv.Commands() {
		if !strings.HasPrefix(line, `printf 'mcs-pid:%s\n' "$$" >&2; exec '`) {
			t.Errorf("command line %q is not the prefix and a quoted program", line)
		}
	}
}

func TestQuote(t *testing.T) {
	tests := []struct {
		argv    []string
		want    string
		wantErr string
	}{
		{[]string{"ls", "-la"}, `'ls' '-la'`, ""},
		{[]string{"echo", "it's"}, `'echo' 'it'\''s'`, ""},
		{[]string{"echo", ""}, `'echo' ''`, ""},
		{[]string{"a\nb"}, "'a\nb'", ""},
		{nil, "", "argv is empty"},
		{[]string{""}, "", "argv is empty"},
		{[]string{"echo", "a\x00b"}, "", "argument 1 holds a NUL byte"},
	}
	for _, tc := range tests {
		got, err := ssh.Quote(tc.argv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Quote(%q) error = %v, want %q", tc.argv, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Quote(%q) = %q, %v; want %q", tc.argv, got, err, tc.want)
		}
	}
}

func TestTimeoutEndsTheRemoteProcess(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := passwordConfig(srv)
	cfg.Timeout, cfg.MaxTimeout = time.Second, 2*time.Second
	td := drivertest.Open(t, ssh.NewToolDriver, cfg)
	pidFile := filepath.Join(t.TempDir(), "pid")
	r := runArgs(t, td, map[string]any{"argv": []any{"sh", "-c", "echo $$ > " + pidFile + "; sleep 5555 & sleep 5556; echo never"}})
	if !r.TimedOut || r.ExitCode != -1 || strings.Contains(r.Stdout, "never") {
		t.Fatalf("result = %+v, want timed out", r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	if _, err := os.Stat("/proc/" + pid); err == nil {
		st, _ := os.ReadFile("/proc/" + pid + "/stat")
		if !strings.Contains(string(st), ") Z ") {
			t.Errorf("the remote shell %s still runs after the timeout", pid)
		}
	}
	r = runArgs(t, td, map[string]any{"argv": []any{"sleep", "30"}, "timeout_seconds": 1e6})
	if !r.TimedOut || !strings.Contains(r.Notice, "above the limit; 2s was used") {
		t.Errorf("clamped: %+v", r)
	}
}

func TestOutputCaps(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := passwordConfig(srv)
	cfg.MaxOutputBytes = 1000
	td := drivertest.Open(t, ssh.NewToolDriver, cfg)
	r := runArgs(t, td, map[string]any{"argv": []any{"sh", "-c", "seq 1 200000; echo THE-END"}})
	if !r.Truncated || !strings.HasPrefix(r.Stdout, "1\n2\n") || !strings.HasSuffix(r.Stdout, "THE-END\n") || len(r.Stdout) > 1200 {
		t.Errorf("stdout = %q", r.Stdout)
	}
}

func TestKeyTypes(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	keys := []struct {
		name       string
		key        any
		pem        string
		passphrase string
	}{
		{"ed25519 openssh", edKey, "", ""},
		{"ecdsa openssh", ecKey, "", ""},
		{"rsa openssh", rsaKey, "", ""},
		{"rsa pkcs1", rsaKey, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)})), ""},
		{"ecdsa pkcs8", ecKey, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})), ""},
		{"ed25519 encrypted", edKey, "", "s3cret phrase"},
	}
	var authorized []gossh.PublicKey
	for _, k := range keys {
		s, err := gossh.NewSignerFromKey(k.key)
		if err != nil {
			t.Fatal(err)
		}
		authorized = append(authorized, s.PublicKey())
	}
	srv := sshtest.Start(t, sshtest.Options{AuthorizedKeys: authorized})
	for _, k := range keys {
		t.Run(k.name, func(t *testing.T) {
			text := k.pem
			if text == "" {
				text = sshtest.PEM(t, k.key, k.passphrase)
			}
			keyFile := filepath.Join(t.TempDir(), "id")
			if err := os.WriteFile(keyFile, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, conn := range []ssh.Conn{
				{Credential: text, Passphrase: k.passphrase},
				{KeyFile: keyFile, Passphrase: k.passphrase},
			} {
				conn.Addr, conn.User, conn.KnownHosts = srv.Addr, srv.User, srv.KnownHosts
				td := drivertest.Open(t, ssh.NewToolDriver, ssh.Config{Conn: conn})
				if r := runArgs(t, td, map[string]any{"argv": []any{"echo", "ok"}}); r.Stdout != "ok\n" {
					t.Errorf("result %+v", r)
				}
			}
		})
	}
}

func TestHostKeyPinned(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	other := sshtest.NewSigner(t)
	empty := filepath.Join(t.TempDir(), "empty_known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, knownHosts, want string
	}{
		{"changed key", sshtest.KnownHosts(t, srv.Addr, other.PublicKey()), "differs from the one in the known_hosts file"},
		{"unknown host", empty, "it is not in the known_hosts file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := passwordConfig(srv)
			cfg.KnownHosts = tc.knownHosts
			td := drivertest.Open(t, ssh.NewToolDriver, cfg)
			_, err := td.ExecuteTool(context.Background(), "run_command", map[string]any{"argv": []any{"true"}})
			var hk *ssh.HostKeyError
			if !errors.As(err, &hk) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), gossh.FingerprintSHA256(srv.HostKey.PublicKey())) {
				t.Errorf("error = %v, want a HostKeyError saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), srv.Password) {
				t.Errorf("the error shows the password: %v", err)
			}
			if len(srv.Commands()) != 0 {
				t.Errorf("commands ran: %q", srv.Commands())
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	secretKey := sshtest.PEM(t, mustEd25519(t), "pass")
	tests := []struct {
		name string
		conn ssh.Conn
		want string
	}{
		{"no addr", ssh.Conn{User: "u", KnownHosts: srv.KnownHosts, Credential: "pw"}, "Addr is not set"},
		{"no user", ssh.Conn{Addr: srv.Addr, KnownHosts: srv.KnownHosts, Credential: "pw"}, "User is not set"},
		{"no known_hosts", ssh.Conn{Addr: srv.Addr, User: "u", Credential: "pw"}, "KnownHosts is not set: the host's key must be pinned"},
		{"missing known_hosts", ssh.Conn{Addr: srv.Addr, User: "u", KnownHosts: "/nonexistent/known_hosts", Credential: "pw"}, "no such file"},
		{"no credential", ssh.Conn{Addr: srv.Addr, User: "u", KnownHosts: srv.KnownHosts}, "no credential"},
		{"encrypted key without passphrase", ssh.Conn{Addr: srv.Addr, User: "u", KnownHosts: srv.KnownHosts, Credential: secretKey}, "is encrypted; set Passphrase"},
		{"wrong passphrase", ssh.Conn{Addr: srv.Addr, User: "u", KnownHosts: srv.KnownHosts, Credential: secretKey, Passphrase: "nope"}, "cannot be read"},
		{"key file without a key", ssh.Conn{Addr: srv.Addr, User: "u", KnownHosts: srv.KnownHosts, KeyFile: srv.KnownHosts}, "holds no private key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ssh.NewToolDriver(ssh.Config{Conn: tc.conn})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") || (tc.conn.Passphrase != "" && strings.Contains(err.Error(), tc.conn.Passphrase)) {
				t.Errorf("the error shows the credential: %v", err)
			}
		})
	}
}

func TestWrongPassword(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	cfg := passwordConfig(srv)
	cfg.Credential = "not-the-password-42"
	td := drivertest.Open(t, ssh.NewToolDriver, cfg)
	_, err := td.ExecuteTool(context.Background(), "run_command", map[string]any{"argv": []any{"true"}})
	if err == nil || !strings.Contains(err.Error(), "log in to") || strings.Contains(err.Error(), cfg.Credential) {
		t.Errorf("error = %v", err)
	}
}

func mustEd25519(t *testing.T) ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

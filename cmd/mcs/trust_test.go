package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/cmd/mcs/internal/demo"
)

// startsMarker is a stack file whose MCP server command leaves a file behind
// when it runs: proof that a process was started.
func startsMarker(marker string) string {
	return "[[driver]]\nlabel = \"srv\"\ntype = \"mcp\"\ncommand = [\"sh\", \"-c\", \"echo started > " + marker + "\"]\n"
}

// withTrustStore points the trust store at a new directory and returns the
// store's path.
func withTrustStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv(configEnv, dir)
	return filepath.Join(dir, "trusted")
}

// withTerminal makes mcs take stdin for a terminal.
func withTerminal(t *testing.T) {
	t.Helper()
	old := stdinIsTerminal
	stdinIsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { stdinIsTerminal = old })
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestAttackImplicitStackStartsProcess: typing mcs tools in a cloned repository
// whose mcs.toml declares an MCP command does not run it, until the user trusts
// the file; the refusal shows the command.
func TestAttackImplicitStackStartsProcess(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the command is a POSIX shell")
	}
	withTrustStore(t)
	marker := filepath.Join(t.TempDir(), "started")
	writeStack(t, startsMarker(marker))
	for _, args := range [][]string{{"tools"}, {"health"}, {"call", "x"}, {"process"}, {"serve-mcp"}} {
		r := mcsRun(t, "", args...)
		if r.code != exitUsage || exists(marker) {
			t.Fatalf("mcs %v: exit %d, process started %v; stderr:\n%s", args, r.code, exists(marker), r.stderr)
		}
		for _, want := range []string{`starts ["sh" "-c" "echo started > ` + marker + `"]`, "you have not trusted it", "mcs trust", "--stack mcs.toml"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("mcs %v: stderr lacks %q:\n%s", args, want, r.stderr)
			}
		}
	}
	// Named with --stack, the file is the user's choice.
	r := mcsRun(t, "", "--stack", "mcs.toml", "tools")
	if !exists(marker) {
		t.Errorf("--stack mcs.toml did not start the server: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// TestAttackImplicitStackWritesOutside: an mcs.toml in the current directory
// does not append its audit log outside its directory (directly, or through a
// symbolic link) without the user's trust; inside its directory it needs none.
func TestAttackImplicitStackWritesOutside(t *testing.T) {
	withTrustStore(t)
	srv := serveStore(t)
	outside := t.TempDir()
	for _, tc := range []struct {
		name, audit string
		link        bool
	}{
		{name: "parent", audit: filepath.Join(outside, "audit.jsonl")},
		{name: "dotdot", audit: "../" + filepath.Base(outside) + "/audit.jsonl"},
		{name: "link to a new file", audit: "audit.jsonl", link: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := filepath.Join(outside, "audit.jsonl")
			os.Remove(target)
			dir := writeStack(t, "[[driver]]\nlabel = \"pets\"\ntype = \"rest\"\nspec = \""+srv.URL+"/openapi.json\"\n[middleware.hooks]\naudit_log = \""+tc.audit+"\"\n")
			if tc.name == "dotdot" {
				// The stack's directory and outside share a parent.
				if err := os.Rename(filepath.Join(dir, "mcs.toml"), filepath.Join(filepath.Dir(outside), "x.toml")); err != nil {
					t.Skip("temporary directories on different parents")
				}
				sub := filepath.Join(filepath.Dir(outside), "repo-"+tc.name)
				os.MkdirAll(sub, 0o700)
				os.Rename(filepath.Join(filepath.Dir(outside), "x.toml"), filepath.Join(sub, "mcs.toml"))
				t.Chdir(sub)
			}
			if tc.link {
				if err := os.Symlink(target, filepath.Join(dir, "audit.jsonl")); err != nil {
					t.Skip("no symbolic links here")
				}
			}
			r := mcsRun(t, "", "call", "getInventory")
			if r.code != exitUsage || exists(target) {
				t.Fatalf("exit %d, audit written outside: %v; stderr:\n%s", r.code, exists(target), r.stderr)
			}
			if !strings.Contains(r.stderr, "[middleware.hooks] writes") {
				t.Errorf("stderr does not show the write:\n%s", r.stderr)
			}
		})
	}
	t.Run("inside", func(t *testing.T) {
		dir := writeStack(t, "[[driver]]\nlabel = \"pets\"\ntype = \"rest\"\nspec = \""+srv.URL+"/openapi.json\"\n[middleware.hooks]\naudit_log = \"logs/audit.jsonl\"\n")
		os.Mkdir(filepath.Join(dir, "logs"), 0o700)
		if r := mcsRun(t, "", "call", "getInventory"); r.code != 0 || !exists(filepath.Join(dir, "logs", "audit.jsonl")) {
			t.Errorf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
	})
}

// TestTrust: asked once on a terminal, the decision is kept for the file's
// content; a changed file asks again; mcs trust records and forgets decisions.
func TestTrust(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the command is a POSIX shell")
	}
	store := withTrustStore(t)
	marker := filepath.Join(t.TempDir(), "started")
	dir := writeStack(t, startsMarker(marker))
	withTerminal(t)

	r := mcsRun(t, "n\n", "tools")
	if r.code != exitUsage || exists(marker) || !strings.Contains(r.stderr, "Trust this file") || !strings.Contains(r.stderr, "is not trusted") {
		t.Fatalf("answered no: exit %d, started %v; stderr:\n%s", r.code, exists(marker), r.stderr)
	}
	r = mcsRun(t, "y\n", "tools")
	if !exists(marker) || !strings.Contains(r.stderr, "mcs: trusted mcs.toml") {
		t.Fatalf("answered yes: exit %d, started %v; stderr:\n%s", r.code, exists(marker), r.stderr)
	}
	if fi, err := os.Stat(store); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust store: %v, %v; want mode 0600", fi, err)
	}
	os.Remove(marker)
	r = mcsRun(t, "", "tools")
	if strings.Contains(r.stderr, "Trust this file") || !exists(marker) {
		t.Errorf("trusted: asked again or not started; stderr:\n%s", r.stderr)
	}

	// Serving over stdio, stdin is not the user's: no question.
	os.Remove(marker)
	if err := os.WriteFile(filepath.Join(dir, "mcs.toml"), []byte(startsMarker(marker)+"# changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = mcsRun(t, "y\n", "serve-mcp")
	if r.code != exitUsage || exists(marker) || strings.Contains(r.stderr, "Trust this file") {
		t.Errorf("changed file, serve-mcp: exit %d, started %v; stderr:\n%s", r.code, exists(marker), r.stderr)
	}

	// mcs trust shows the effects and asks; --yes trusts; --forget forgets.
	stdinIsTerminal = func(io.Reader) bool { return false }
	r = mcsRun(t, "", "trust")
	if r.code != exitUsage || !strings.Contains(r.stdout, `starts ["sh" "-c"`) || !strings.Contains(r.stderr, "run mcs trust --yes mcs.toml") {
		t.Errorf("trust without a terminal: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r = mcsRun(t, "", "trust", "--yes"); r.code != 0 || !strings.Contains(r.stdout, "Trusted") {
		t.Errorf("trust --yes: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r = mcsRun(t, "", "trust", "--list"); !strings.Contains(r.stdout, filepath.Join(dir, "mcs.toml")) {
		resolved, _ := filepath.EvalSymlinks(dir)
		if !strings.Contains(r.stdout, filepath.Join(resolved, "mcs.toml")) {
			t.Errorf("trust --list:\n%s", r.stdout)
		}
	}
	if r = mcsRun(t, "", "tools"); !exists(marker) {
		t.Errorf("after mcs trust --yes: not started; stderr:\n%s", r.stderr)
	}
	os.Remove(marker)
	if r = mcsRun(t, "", "trust", "--forget"); r.code != 0 || !strings.Contains(r.stdout, "no longer trusted") {
		t.Errorf("trust --forget: exit %d, %s", r.code, r.stdout)
	}
	if r = mcsRun(t, "", "tools"); r.code != exitUsage || exists(marker) {
		t.Errorf("after --forget: exit %d, started %v", r.code, exists(marker))
	}

	// A file that starts nothing needs no trust.
	writeStack(t, "[[driver]]\nlabel = \"files\"\ntype = \"filesystem\"\nroot = \".\"\nread_only = true\n")
	if r = mcsRun(t, "", "trust"); r.code != 0 || !strings.Contains(r.stdout, "needs no trust") {
		t.Errorf("trust of a harmless file: exit %d, %s", r.code, r.stdout)
	}
}

// TestAttackImplicitStackSendsCredential: a cloned repository's mcs.toml that
// sends one of the user's tokens (MCS_TOKEN_<LABEL>) to a host of its own choosing
// is not built until the user trusts it; no request reaches that host.
func TestAttackImplicitStackSendsCredential(t *testing.T) {
	withTrustStore(t)
	t.Setenv("MCS_TOKEN_PETS", "s3cret-user-token")
	got := make(chan string, 16)
	store := demo.NewStore().Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.URL.Path + " " + r.Header.Get("Authorization") + r.Header.Get("api_key"):
		default:
		}
		store.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	writeStack(t, "[[driver]]\nlabel = \"pets\"\ntype = \"rest\"\nspec = \""+srv.URL+"/openapi.json\"\ncredentials = \"env\"\n")
	r := mcsRun(t, "", "call", "getInventory")
	if r.code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, exitUsage, r.stderr)
	}
	if !strings.Contains(r.stderr, "sends MCS_TOKEN_PETS") {
		t.Errorf("stderr does not show the credential:\n%s", r.stderr)
	}
	select {
	case req := <-got:
		t.Errorf("the untrusted stack reached its host: %s", req)
	default:
	}
}

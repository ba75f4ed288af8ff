//go:build unix

package npmpeer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The pinned peers.
const (
	ServerEverything = "@modelcontextprotocol/server-everything@2026.8.31"
	ServerFilesystem = "@modelcontextprotocol/server-filesystem@2026.8.31"
	Inspector        = "@modelcontextprotocol/inspector@2.12.0"
)

// The sets the tests install: the servers behind drivers/mcp, the clients of
// mcpserver.
var (
	Servers = []string{ServerEverything, ServerFilesystem}
	Clients = []string{Inspector}
)

// unreachable matches npm's messages for a registry it cannot reach.
var unreachable = regexp.MustCompile(`ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|proxy|getaddrinfo|socket hang up`)

// CacheDir is where the packages are installed: $MCS_NPM_CACHE, or mcs-go/npm
// under the user's cache directory.
func CacheDir() (string, error) {
	if d := os.Getenv("MCS_NPM_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "mcs-go", "npm"), nil
}

// Install installs the packages (name@version) into a folder of the cache kept
// for that set, unless they are there already, and returns the folder. It skips
// the test when npm cannot reach the registry, and fails it for any other
// problem (npm missing, a failed install).
func Install(t testing.TB, pkgs ...string) string {
	t.Helper()
	root, err := CacheDir()
	if err != nil {
		t.Fatalf("npm cache folder: %v; set MCS_NPM_CACHE", err)
	}
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	dir := filepath.Join(root, hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if installed(dir, pkgs) {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is not on PATH; these tests run real MCP peers from npm: install Node.js (npm) to run them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--ignore-scripts", "--prefix", dir}, pkgs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if unreachable.MatchString(out.String()) {
			t.Skipf("npm cannot reach the registry, so the real MCP peers %v cannot be installed: %v\n%s", pkgs, err, tailOf(out.String()))
		}
		t.Fatalf("npm install %v: %v\n%s", pkgs, err, tailOf(out.String()))
	}
	if !installed(dir, pkgs) {
		t.Fatalf("npm install %v finished, but the packages are not in %s", pkgs, dir)
	}
	return dir
}

// installed reports whether every package is in dir at its pinned version.
func installed(dir string, pkgs []string) bool {
	for _, p := range pkgs {
		at := strings.LastIndex(p, "@")
		name, version := p[:at], p[at+1:]
		data, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil {
			return false
		}
		var meta struct{ Version string }
		if json.Unmarshal(data, &meta) != nil || meta.Version != version {
			return false
		}
	}
	return true
}

// Script returns the path of a file of an installed package, such as
// Script(dir, ServerEverything, "dist/index.js").
func Script(dir, pkg, file string) string {
	return filepath.Join(dir, "node_modules", pkg[:strings.LastIndex(pkg, "@")], filepath.FromSlash(file))
}

// Node returns the path of node, failing the test when it is missing.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH; install Node.js to run the tests with real MCP peers")
	}
	return node
}

func tailOf(s string) string {
	if len(s) > 4000 {
		return "..." + s[len(s)-4000:]
	}
	return s
}

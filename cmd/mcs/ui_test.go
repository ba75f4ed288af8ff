package main

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		want   string // "" no error, else a part of it
	}{
		{"127.0.0.1:0", false, ""},
		{"localhost:8765", false, ""},
		{"[::1]:8765", false, ""},
		{"192.0.2.10:8765", false, "not a loopback address"},
		{"192.0.2.10:8765", true, ""},
		{"0.0.0.0:8765", true, "listens on every address"},
		{":8765", true, "listens on every address"},
		{"nonsense", false, "write host:port"},
	} {
		err := checkAddr(c.addr, c.remote)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("checkAddr(%q, %v): %v", c.addr, c.remote, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("checkAddr(%q, %v): %v, want an error saying %q", c.addr, c.remote, err, c.want)
		}
	}
}

// A remote address without --allow-remote is a usage error: nothing listens.
func TestUIRefusesRemoteAddr(t *testing.T) {
	r := mcsRun(t, "", "ui", "--no-open", "--addr", "192.0.2.10:0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--allow-remote") {
		t.Fatalf("exit %d, stderr %q; want 2 and a hint at --allow-remote", r.code, r.stderr)
	}
}

// A stack file that does not parse is shown by the console, with its file,
// line and key, rather than ending the command.
func TestUIShowsABrokenStack(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFile(t, "mcs.toml", "[[driver]]\nlabel = \"a\"\ntype = \"csv\"\nrot = \".\"\n")
	url, _, _ := startUIHere(t)
	page := getPage(t, url)
	for _, want := range []string{"The stack did not build", "mcs.toml:4", "rot", "unknown key"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// getPage visits url as a browser does and returns the page it lands on.
func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Jar: newJar()}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcs-go/mcs/internal/oauthtest"
)

// lineWriter collects output and hands the first sign-in link to a channel.
type linkWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	link chan string
	sent bool
}

var linkPattern = regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)

func (w *linkWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := linkPattern.FindString(w.buf.String()); m != "" && !w.sent {
		w.sent = true
		w.link <- m
	}
	return len(p), nil
}

func (w *linkWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestAuthCommands(t *testing.T) {
	as := oauthtest.New(t)
	dir := t.TempDir()
	spec, err := os.ReadFile("../../stack/testdata/secured.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "secured.json"), spec, 0o600)
	file := filepath.Join(dir, "mcs.toml")
	os.WriteFile(file, []byte(`[[driver]]
label = "gh"
type = "rest"
spec = "secured.json"
base_url = "http://127.0.0.1:1/api"
credentials = "oauth"
[driver.oauth]
client_id = "`+as.ClientID+`"
authorize_url = "`+as.AuthURL()+`"
token_url = "`+as.TokenURL()+`"
scopes = ["repo", "read:user"]

[auth]
store = "sqlite:tokens.db"
`), 0o600)

	r := mcsRun(t, "", "--stack", file, "auth", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "not signed in") {
		t.Fatalf("status before login: %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	out := &linkWriter{link: make(chan string, 1)}
	var errOut bytes.Buffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"--stack", file, "auth", "login", "gh"}, strings.NewReader(""), out, &errOut)
	}()
	link := <-out.link
	oauthtest.Browser(t, link)
	if code := <-done; code != 0 || !strings.Contains(out.String(), "Signed in for gh.") {
		t.Fatalf("login: %d\n%s%s", code, out.String(), errOut.String())
	}

	r = mcsRun(t, "", "--stack", file, "auth", "status")
	if r.code != 0 || !strings.Contains(r.stdout, "signed in") || !strings.Contains(r.stdout, "repo read:user") {
		t.Errorf("status after login: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "at-") || strings.Contains(r.stdout, "rt-") {
		t.Errorf("status prints a token:\n%s", r.stdout)
	}

	r = mcsRun(t, "", "--stack", file, "auth", "logout", "gh")
	if r.code != 0 {
		t.Errorf("logout: %d %s", r.code, r.stderr)
	}
	if r = mcsRun(t, "", "--stack", file, "auth", "status"); !strings.Contains(r.stdout, "not signed in") {
		t.Errorf("status after logout:\n%s", r.stdout)
	}
	if r = mcsRun(t, "", "--stack", file, "auth", "login", "nobody"); r.code != 2 || !strings.Contains(r.stderr, `no driver labelled "nobody" signs in; the drivers that do: gh`) {
		t.Errorf("login of an unknown label: %d %s", r.code, r.stderr)
	}

	// A refused sign-in fails the command with the reason, and stores nothing.
	as.Deny.Store(true)
	out = &linkWriter{link: make(chan string, 1)}
	errOut.Reset()
	go func() {
		done <- run(context.Background(), []string{"--stack", file, "auth", "login", "gh"}, strings.NewReader(""), out, &errOut)
	}()
	oauthtest.Browser(t, <-out.link)
	if code := <-done; code != 1 || !strings.Contains(errOut.String(), "declined") {
		t.Errorf("a declined login: %d\n%s", code, errOut.String())
	}

	// A wrong key is an error, not a new sign-in.
	t.Setenv("MCS_TOKEN_KEY", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	as.Deny.Store(false)
	out = &linkWriter{link: make(chan string, 1)}
	go func() {
		done <- run(context.Background(), []string{"--stack", file, "auth", "login", "gh"}, strings.NewReader(""), out, &errOut)
	}()
	oauthtest.Browser(t, <-out.link)
	if code := <-done; code != 0 {
		t.Fatalf("login with a key: %d %s", code, errOut.String())
	}
	t.Setenv("MCS_TOKEN_KEY", "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	if r = mcsRun(t, "", "--stack", file, "auth", "status"); r.code != 1 || !strings.Contains(r.stderr, "sealed with another key") {
		t.Errorf("status with a wrong key: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

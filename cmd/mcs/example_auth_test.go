package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/internal/oauthtest"
)

// exampleTB lets an Example use the test helpers outside a test.
type exampleTB struct{ testing.TB }

func (exampleTB) Helper()               {}
func (exampleTB) Cleanup(func())        {}
func (exampleTB) Fatalf(string, ...any) { panic("example failed") }

// Example_auth signs in ahead of time for a driver with credentials = "oauth"
// (a scripted browser follows the link), lists the sign-in without any token,
// and signs out. The link, times and paths change from run to run and are
// replaced.
func Example_auth() {
	as := oauthtest.New(exampleTB{})
	defer as.Close()
	dir, _ := os.MkdirTemp("", "mcs-auth-example")
	defer os.RemoveAll(dir)
	spec, _ := os.ReadFile("../../stack/testdata/secured.json")
	_ = os.WriteFile(filepath.Join(dir, "secured.json"), spec, 0o600)
	file := filepath.Join(dir, "mcs.toml")
	_ = os.WriteFile(file, []byte(`[[driver]]
label = "github"
type = "rest"
spec = "secured.json"
credentials = "oauth"
[driver.oauth]
client_id = "`+as.ClientID+`"
authorize_url = "`+as.AuthURL()+`"
token_url = "`+as.TokenURL()+`"
scopes = ["repo"]

[auth]
store = "sqlite:tokens.db"
`), 0o600)

	mcs := func(args ...string) {
		out := &linkWriter{link: make(chan string, 1)}
		var errOut bytes.Buffer
		done := make(chan int)
		go func() {
			done <- run(context.Background(), append([]string{"--stack", file}, args...), strings.NewReader(""), out, &errOut)
		}()
		var code int
		select {
		case link := <-out.link: // the browser
			if resp, err := http.Get(link); err == nil {
				resp.Body.Close()
			}
			code = <-done
		case code = <-done:
		}
		fmt.Printf("$ mcs %s  (exit code %d)\n", strings.Join(args, " "), code)
		text := linkPattern.ReplaceAllString(out.String(), "LINK")
		text = timePattern.ReplaceAllString(strings.ReplaceAll(text, dir, "DIR"), "TIME")
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			fmt.Println(strings.Join(strings.Fields(line), " "))
		}
	}
	mcs("auth", "login", "github")
	mcs("auth", "status")
	mcs("auth", "logout", "github")
	// Output:
	// $ mcs auth login github  (exit code 0)
	// To sign in for github, open this link in a browser on this computer:
	//
	// LINK
	//
	// Waiting for the sign-in...
	// Signed in for github.
	// $ mcs auth status  (exit code 0)
	// LABEL SCOPE MODE STATE OAUTH SCOPES EXPIRES STORE
	// github github oauth signed in repo TIME sqlite:DIR/tokens.db
	// $ mcs auth logout github  (exit code 0)
	// Signed out for github.
}

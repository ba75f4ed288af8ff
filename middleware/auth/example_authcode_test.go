package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
)

// The first Token call returns the sign-in link as a challenge; the user opens
// it (here a scripted browser follows it to the loopback redirect), and the
// next call returns the access token.
func ExampleNewAuthCodeProvider() {
	as := oauthtest.New(exampleT{})
	defer as.Close()
	p, err := auth.NewAuthCodeProvider(auth.AuthCodeConfig{
		OAuth2: oauth2.Config{
			ClientID: as.ClientID,
			Endpoint: oauth2.Endpoint{AuthURL: as.AuthURL(), TokenURL: as.TokenURL()},
			Scopes:   []string{"repo"},
		},
		Store:  auth.NewMemoryStore(), // or auth.OpenStore(ctx, "sqlite:tokens.db")
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	ctx := context.Background()

	_, err = p.Token(ctx, "github")
	var ch *auth.Challenge
	if !errors.As(err, &ch) {
		fmt.Println("no challenge:", err)
		return
	}
	link, _ := url.Parse(ch.URL)
	fmt.Println("scope:", ch.Scope)
	fmt.Println("PKCE:", link.Query().Get("code_challenge_method"))
	redirect, _ := url.Parse(link.Query().Get("redirect_uri"))
	fmt.Println("redirect:", redirect.Hostname(), redirect.Path)

	resp, err := http.Get(ch.URL) // the user signs in in the browser
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	if err := p.Wait(ctx, "github"); err != nil {
		fmt.Println(err)
		return
	}
	tok, err := p.Token(ctx, "github")
	fmt.Println("access token:", strings.HasPrefix(tok, "at-"), err)
	st, _ := p.Status(ctx, "github")
	fmt.Println("signed in:", st.SignedIn, "scopes:", st.Scopes, "refreshable:", st.Refreshable)
	// Output:
	// scope: github
	// PKCE: S256
	// redirect: 127.0.0.1 /callback
	// access token: true <nil>
	// signed in: true scopes: [repo] refreshable: true
}

// exampleT lets an Example use the test helpers outside a test.
type exampleT struct{ testing.TB }

func (exampleT) Helper()               {}
func (exampleT) Cleanup(func())        {}
func (exampleT) Fatalf(string, ...any) { panic("example failed") }

// A store by URL, sealed at rest with a key such as the stack reads from
// MCS_TOKEN_KEY; reading it with another key is an error.
func ExampleOpenStore() {
	ctx := context.Background()
	key, _ := auth.ParseKey("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	store, err := auth.OpenStore(ctx, "memory:", auth.WithEncryptionKey(key))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = store.Save("k", "secret value", time.Time{})
	v, _, ok, err := store.Load("k")
	fmt.Println(v, ok, err)

	_, err = auth.OpenStore(ctx, "sqlite:tokens.db")
	fmt.Println(err)
	// Output:
	// secret value true <nil>
	// auth: token store "sqlite:tokens.db": the sqlite store is not linked in; import _ "github.com/mcs-go/mcs/middleware/auth/sqlite"
}

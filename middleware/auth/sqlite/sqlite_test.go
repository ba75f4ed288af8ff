package sqlite_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/internal/tokenstoretest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/auth/sqlite"
)

func TestMain(m *testing.M) { os.Exit(tokenstoretest.Main(m)) }

func TestConformance(t *testing.T) {
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "tokens.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tokenstoretest.Conformance(t, s)
}

func TestFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if _, err := sqlite.Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("Open(directory) = %v", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not a database ", 100)), 0o600)
	if _, err := sqlite.Open(junk); err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Errorf("Open(junk) = %v", err)
	}
}

// Two processes sharing one SQLite file, a token one second from expiry, both
// asking at once: one refresh.
func TestRefreshRace(t *testing.T) {
	trials := 1000
	if testing.Short() {
		trials = 50
	}
	tokenstoretest.RefreshRace(t, "sqlite:"+filepath.Join(t.TempDir(), "tokens.db"), trials)
}

// A token signed in by one run is there for the next one, sealed at rest; a
// wrong key is an error, not a new sign-in.
func TestRestartPersistenceSealed(t *testing.T) {
	srv := oauthtest.New(t)
	url := "sqlite:" + filepath.Join(t.TempDir(), "tokens.db")
	key := make([]byte, 32)
	key[5] = 7
	run := func(key []byte) (*auth.AuthCodeProvider, func()) {
		store, err := auth.OpenStore(context.Background(), url, auth.WithEncryptionKey(key))
		if err != nil {
			t.Fatal(err)
		}
		p, err := auth.NewAuthCodeProvider(auth.AuthCodeConfig{
			OAuth2: oauth2.Config{ClientID: srv.ClientID, Endpoint: oauth2.Endpoint{AuthURL: srv.AuthURL(), TokenURL: srv.TokenURL()}},
			Store:  store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		return p, func() { p.Close(); store.(io.Closer).Close() }
	}
	p1, close1 := run(key)
	_, err := p1.Token(context.Background(), "api")
	ch, ok := errors.AsType[*auth.Challenge](err)
	if !ok {
		t.Fatalf("first Token = %v", err)
	}
	oauthtest.Browser(t, ch.URL)
	if err := p1.Wait(context.Background(), "api"); err != nil {
		t.Fatal(err)
	}
	tok1, err := p1.Token(context.Background(), "api")
	if err != nil {
		t.Fatal(err)
	}
	close1()

	// Neither the database nor its write-ahead log holds the token in the clear.
	files, _ := filepath.Glob(strings.TrimPrefix(url, "sqlite:") + "*")
	if len(files) == 0 {
		t.Fatal("no database file")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil || strings.Contains(string(raw), tok1) || strings.Contains(string(raw), "refresh_token") {
			t.Errorf("%s holds the token in the clear (%v)", filepath.Base(f), err)
		}
	}

	p2, close2 := run(key)
	defer close2()
	if tok2, err := p2.Token(context.Background(), "api"); err != nil || tok2 != tok1 {
		t.Errorf("after a restart: %q, %v; want the stored token", tok2, err)
	}
	wrong := make([]byte, 32)
	p3, close3 := run(wrong)
	defer close3()
	_, err = p3.Token(context.Background(), "api")
	if _, ok := errors.AsType[*auth.KeyError](err); !ok {
		t.Errorf("with a wrong key: %v; want a *KeyError", err)
	}
	if n := srv.Exchanges.Load(); n != 1 {
		t.Errorf("%d sign-ins, want 1", n)
	}
}

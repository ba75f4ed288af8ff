// Package tokenstoretest checks token stores of package auth: the behaviour
// every store shares ([Conformance]) and the refresh race of processes sharing
// one store ([RefreshRace]), run in child processes of the test binary.
//
// A package that uses RefreshRace calls [Main] from its TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(tokenstoretest.Main(m)) }
package tokenstoretest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/internal/oauthtest"
	"github.com/mcs-go/mcs/middleware/auth"
)

const (
	envChild    = "MCS_TOKENSTORETEST_CHILD"
	envStore    = "MCS_TOKENSTORETEST_STORE"
	envTokenURL = "MCS_TOKENSTORETEST_TOKEN_URL"
	envClient   = "MCS_TOKENSTORETEST_CLIENT"
	raceScope   = "race"
)

// Runner runs a package's tests: a *testing.M, or a wrapper that starts and
// stops a peer around them.
type Runner interface{ Run() int }

// Main runs m, or, in a child process started by [RefreshRace], the child's
// loop instead. It returns the exit code for os.Exit.
func Main(m Runner) int {
	if os.Getenv(envChild) == "1" {
		if err := child(); err != nil {
			fmt.Fprintln(os.Stderr, "tokenstoretest child:", err)
			return 1
		}
		return 0
	}
	return m.Run()
}

func raceConfig(client, tokenURL string, store auth.TokenStore) auth.AuthCodeConfig {
	return auth.AuthCodeConfig{
		OAuth2: oauth2.Config{ClientID: client, Endpoint: oauth2.Endpoint{
			AuthURL: strings.TrimSuffix(tokenURL, "/token") + "/authorize", TokenURL: tokenURL}},
		Store:  store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// child opens the store once, then answers each line "go" on stdin with the
// result of Token of a new provider: "ok TOKEN" or "err MESSAGE".
func child() error {
	ctx := context.Background()
	store, err := auth.OpenStore(ctx, os.Getenv(envStore))
	if err != nil {
		return err
	}
	if c, ok := store.(io.Closer); ok {
		defer c.Close()
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		p, err := auth.NewAuthCodeProvider(raceConfig(os.Getenv(envClient), os.Getenv(envTokenURL), store))
		if err != nil {
			return err
		}
		tok, err := p.Token(ctx, raceScope)
		p.Close()
		if err != nil {
			fmt.Fprintf(out, "err %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Fprintf(out, "ok %s\n", tok)
		}
		out.Flush()
	}
	return in.Err()
}

type proc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// RefreshRace starts two child processes of the test binary, each with its own
// connection to the store at storeURL, and runs trials: the token is put in
// the store one second from expiry with a live one-time refresh token, both
// children ask for it at once, and the token endpoint must see exactly one
// refresh and both children get the same new token. The package's TestMain must
// call [Main].
func RefreshRace(t *testing.T, storeURL string, trials int) {
	t.Helper()
	srv := oauthtest.New(t)
	ctx := context.Background()
	store, err := auth.OpenStore(ctx, storeURL)
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := store.(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	p, err := auth.NewAuthCodeProvider(raceConfig(srv.ClientID, srv.TokenURL(), store))
	if err != nil {
		t.Fatal(err)
	}
	key := p.StoreKey(raceScope)
	var procs [2]*proc
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envStore+"="+storeURL, envTokenURL+"="+srv.TokenURL(), envClient+"="+srv.ClientID)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = &proc{cmd: cmd, in: in, out: bufio.NewScanner(out)}
		t.Cleanup(func() {
			in.Close()
			cmd.Wait()
		})
	}
	for trial := range trials {
		rt := srv.IssueRefresh("")
		if err := store.Save(key, fmt.Sprintf(`{"access_token":"stale-%d","refresh_token":%q}`, trial, rt), time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		before := srv.Refreshes.Load()
		for _, pr := range procs {
			if _, err := io.WriteString(pr.in, "go\n"); err != nil {
				t.Fatal(err)
			}
		}
		var got [2]string
		var wg sync.WaitGroup
		for i, pr := range procs {
			wg.Go(func() {
				if pr.out.Scan() {
					got[i] = pr.out.Text()
				} else {
					got[i] = fmt.Sprintf("err child ended: %v", errors.Join(pr.out.Err(), io.ErrUnexpectedEOF))
				}
			})
		}
		wg.Wait()
		n := srv.Refreshes.Load() - before
		if n != 1 || got[0] != got[1] || !strings.HasPrefix(got[0], "ok ") || !srv.Valid(strings.TrimPrefix(got[0], "ok ")) {
			t.Fatalf("trial %d: the token endpoint saw %d refreshes (want 1); the children got %q and %q; refused: %v", trial, n, got[0], got[1], srv.Failures)
		}
	}
}

// Conformance checks what every token store does: entries with and without
// expiry, replacement, deletion, a missing key, and (for a TokenLocker) that a
// lease is exclusive until given back or lapsed.
func Conformance(t *testing.T, store auth.TokenStore) {
	t.Helper()
	exp := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	if _, _, ok, err := store.Load("missing"); ok || err != nil {
		t.Errorf("Load(missing) = %v, %v", ok, err)
	}
	if err := store.Save("a", `{"v":1}`, exp); err != nil {
		t.Fatal(err)
	}
	if err := store.Save("b", "no expiry", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if v, e, ok, err := store.Load("a"); !ok || err != nil || v != `{"v":1}` || !e.Equal(exp) {
		t.Errorf("Load(a) = %q, %v, %v, %v; want {\"v\":1}, %v", v, e, ok, err, exp)
	}
	if v, e, ok, err := store.Load("b"); !ok || err != nil || v != "no expiry" || !e.IsZero() {
		t.Errorf("Load(b) = %q, %v, %v, %v", v, e, ok, err)
	}
	if err := store.Save("a", "second", exp.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if v, e, _, _ := store.Load("a"); v != "second" || !e.Equal(exp.Add(time.Hour)) {
		t.Errorf("after a second Save: %q, %v", v, e)
	}
	if err := store.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete("a"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	if _, _, ok, _ := store.Load("a"); ok {
		t.Errorf("a deleted key is still there")
	}
	l, ok := store.(auth.TokenLocker)
	if !ok {
		return
	}
	unlock, err := l.Lock(context.Background(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = l.Lock(ctx, "k", time.Minute)
	cancel()
	if err == nil {
		t.Fatalf("a second Lock of a held lease succeeded")
	}
	other, err := l.Lock(context.Background(), "other", time.Minute)
	if err != nil {
		t.Fatalf("Lock of another key: %v", err)
	}
	other()
	unlock()
	again, err := l.Lock(context.Background(), "k", 50*time.Millisecond)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	// The lease lapses after its ttl (a holder that died).
	if _, isMemory := store.(*auth.MemoryStore); !isMemory {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		taken, err := l.Lock(ctx, "k", time.Minute)
		cancel()
		if err != nil {
			t.Fatalf("Lock after the lease lapsed: %v", err)
		}
		taken()
	}
	again()
}

// BenchCachedToken measures Token of a provider whose token is in store and
// valid: the cost of a call once signed in (a read of the store, which keeps
// expiry and sign-outs honoured, and no request to the authorization server).
func BenchCachedToken(b *testing.B, store auth.TokenStore) {
	p, err := auth.NewAuthCodeProvider(raceConfig("bench-client", "https://as.example/token", store))
	if err != nil {
		b.Fatal(err)
	}
	if err := store.Save(p.StoreKey("bench"), `{"access_token":"at-bench","refresh_token":"rt-bench","scope":"repo"}`, time.Now().Add(time.Hour)); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if tok, err := p.Token(ctx, "bench"); err != nil || tok != "at-bench" {
			b.Fatalf("Token = %q, %v", tok, err)
		}
	}
}

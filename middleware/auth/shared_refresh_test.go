package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/internal/oauthtest"
)

// Providers sharing one store refresh an expiring token once, whatever the
// flow that signed in: the device flow's providers take the store's lease too.
func TestDeviceFlowSharedRefresh(t *testing.T) {
	srv := oauthtest.New(t)
	store := NewMemoryStore()
	cfg := DeviceFlowConfig{
		OAuth2: oauth2.Config{ClientID: srv.ClientID, Endpoint: oauth2.Endpoint{DeviceAuthURL: srv.URL + "/device", TokenURL: srv.TokenURL()}},
		Store:  store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for trial := range 50 {
		a, b := NewDeviceFlowProvider(cfg), NewDeviceFlowProvider(cfg)
		key := a.storeKey("api")
		rt := srv.IssueRefresh("")
		if err := store.Save(key, fmt.Sprintf(`{"access_token":"stale","refresh_token":%q}`, rt), time.Now().Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		before := srv.Refreshes.Load()
		var got [2]string
		var errs [2]error
		var wg sync.WaitGroup
		for i, p := range []*DeviceFlowProvider{a, b} {
			wg.Go(func() { got[i], errs[i] = p.Token(context.Background(), "api") })
		}
		wg.Wait()
		if n := srv.Refreshes.Load() - before; n != 1 || errs[0] != nil || errs[1] != nil || got[0] != got[1] || !srv.Valid(got[0]) {
			t.Fatalf("trial %d: %d refreshes, tokens valid %v, errors %v, %v", trial, n, srv.Valid(got[0]), errs[0], errs[1])
		}
	}
}

// saveFails is a store that reads but cannot write.
type saveFails struct{ *MemoryStore }

func (saveFails) Save(string, string, time.Time) error { return fmt.Errorf("disk full") }

// A sign-in whose token cannot be stored fails, and nothing is kept.
func TestAuthCodeSaveFails(t *testing.T) {
	srv := oauthtest.New(t)
	mem := NewMemoryStore()
	p, err := NewAuthCodeProvider(AuthCodeConfig{
		OAuth2: oauth2.Config{ClientID: srv.ClientID, Endpoint: oauth2.Endpoint{AuthURL: srv.AuthURL(), TokenURL: srv.TokenURL()}},
		Store:  saveFails{mem}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Token(context.Background(), "api")
	ch, ok := err.(*Challenge)
	if !ok {
		t.Fatalf("Token = %v", err)
	}
	status, _ := oauthtest.Browser(t, ch.URL)
	if status == 200 {
		t.Errorf("the browser was told the sign-in succeeded")
	}
	err = p.Wait(context.Background(), "api")
	if _, ok := errors.AsType[*StoreError](err); !ok {
		t.Errorf("Wait = %v; want a *StoreError", err)
	}
	if len(MemoryStoreKeys(mem)) != 0 {
		t.Errorf("something was stored")
	}
}

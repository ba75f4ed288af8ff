package redis_test

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcs-go/mcs/internal/redistest"
	"github.com/mcs-go/mcs/internal/tokenstoretest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/auth/redis"
)

func TestMain(m *testing.M) {
	os.Exit(tokenstoretest.Main(&mainRunner{m}))
}

// mainRunner runs the tests with the shared Redis server stopped afterwards.
type mainRunner struct{ m *testing.M }

func (r *mainRunner) Run() int { return redistest.Main(r.m) }

func TestConformance(t *testing.T) {
	s, err := redis.Open(context.Background(), redistest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tokenstoretest.Conformance(t, s)
}

// Two processes sharing one Redis server refresh an expiring token once.
func TestRefreshRace(t *testing.T) {
	tokenstoretest.RefreshRace(t, redistest.New(t), 100)
}

func TestDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = auth.OpenStore(ctx, "redis://:hunter2@"+addr+"/0")
	if err == nil || !strings.Contains(err.Error(), "cannot connect") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("OpenStore of a server that is down: %v", err)
	}
	// A store that goes down after opening: a clear StoreError from the provider.
	s, err := redis.Open(ctx, redistest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, _, _, err := s.Load("k"); err == nil || !strings.Contains(err.Error(), "load a token") {
		t.Errorf("Load on a closed store: %v", err)
	}
	p, err := auth.NewAuthCodeProvider(auth.AuthCodeConfig{Store: s, OAuth2: oauth2.Config{ClientID: "c",
		Endpoint: oauth2.Endpoint{AuthURL: "https://as.example/a", TokenURL: "https://as.example/t"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Token(ctx, "x")
	if _, ok := errors.AsType[*auth.StoreError](err); !ok {
		t.Errorf("Token with the store down: %v; want a *StoreError", err)
	}
	if _, ok := errors.AsType[*auth.Challenge](err); ok {
		t.Errorf("a store that is down started a sign-in")
	}
}

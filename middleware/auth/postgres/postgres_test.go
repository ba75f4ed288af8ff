package postgres_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/internal/pgtest"
	"github.com/mcs-go/mcs/internal/tokenstoretest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/auth/postgres"
)

func TestMain(m *testing.M) { os.Exit(tokenstoretest.Main(&mainRunner{m})) }

// mainRunner runs the tests with the shared PostgreSQL server stopped
// afterwards.
type mainRunner struct{ m *testing.M }

func (r *mainRunner) Run() int { return pgtest.Main(r.m) }

func TestConformance(t *testing.T) {
	s, err := postgres.Open(context.Background(), pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tokenstoretest.Conformance(t, s)
}

// Two processes sharing one PostgreSQL database refresh an expiring token once.
func TestRefreshRace(t *testing.T) {
	tokenstoretest.RefreshRace(t, pgtest.New(t), 100)
}

func TestOpenErrors(t *testing.T) {
	_, err := auth.OpenStore(context.Background(), "postgres://mcs:hunter2@127.0.0.1:1/db?connect_timeout=5")
	if err == nil || !strings.Contains(err.Error(), "cannot connect") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("OpenStore of a server that is down: %v", err)
	}
}

package postgres_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs/internal/pgtest"
	"github.com/mcs-go/mcs/internal/tokenstoretest"
	"github.com/mcs-go/mcs/middleware/auth/postgres"
)

// BenchmarkCachedToken is the cost of Token once signed in, the token read
// from PostgreSQL on loopback on every call (target: 1 ms or less).
func BenchmarkCachedToken(b *testing.B) {
	s, err := postgres.Open(context.Background(), pgtest.New(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tokenstoretest.BenchCachedToken(b, s)
}

package approvals_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/approvals/postgres"
	"github.com/mcs-go/mcs/approvals/sqlite"
	"github.com/mcs-go/mcs/internal/pgtest"
)

// BenchmarkRoundTrip is one approval's life: create, decide, claim. Targets:
// 2 ms on SQLite, 5 ms on PostgreSQL over loopback.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bk := range []struct {
		name string
		open func(b *testing.B) approvals.Store
	}{
		{"sqlite", func(b *testing.B) approvals.Store {
			s, err := sqlite.Open(b.TempDir() + "/approvals.db")
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"postgres", func(b *testing.B) approvals.Store {
			s, err := postgres.Open(context.Background(), pgtest.New(b))
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	} {
		b.Run(bk.name, func(b *testing.B) {
			ctx := context.Background()
			s := bk.open(b)
			defer s.Close()
			r := request("weather", map[string]any{"city": "Paris"}, time.Now(), time.Hour)
			for b.Loop() {
				created, err := s.Create(ctx, r)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Decide(ctx, created.ID, approvals.Decision{Approve: true, By: "bench"}); err != nil {
					b.Fatal(err)
				}
				if _, ok, err := s.Claim(ctx, r.Fingerprint); !ok || err != nil {
					b.Fatalf("Claim = %v, %v", ok, err)
				}
			}
		})
	}
}

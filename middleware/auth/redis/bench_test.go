package redis_test

import (
	"context"
	"testing"

	"github.com/mcs-go/mcs/internal/redistest"
	"github.com/mcs-go/mcs/internal/tokenstoretest"
	"github.com/mcs-go/mcs/middleware/auth/redis"
)

// BenchmarkCachedToken is the cost of Token once signed in, the token read
// from Redis on loopback on every call (target: 1 ms or less).
func BenchmarkCachedToken(b *testing.B) {
	s, err := redis.Open(context.Background(), redistest.New(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tokenstoretest.BenchCachedToken(b, s)
}

package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs/internal/tokenstoretest"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/middleware/auth/sqlite"
)

// BenchmarkCachedToken is the cost of Token once signed in, the token read
// from an SQLite store on every call (target: 50 µs or less), plain and
// sealed.
func BenchmarkCachedToken(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		s, err := sqlite.Open(filepath.Join(b.TempDir(), "tokens.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		tokenstoretest.BenchCachedToken(b, s)
	})
	b.Run("sealed", func(b *testing.B) {
		s, err := sqlite.Open(filepath.Join(b.TempDir(), "tokens.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		sealed, err := auth.Seal(s, make([]byte, 32))
		if err != nil {
			b.Fatal(err)
		}
		tokenstoretest.BenchCachedToken(b, sealed)
	})
}

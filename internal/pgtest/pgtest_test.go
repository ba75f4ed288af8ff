package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcs-go/mcs/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Two databases from New are distinct and empty, and each takes writes.
func TestNew(t *testing.T) {
	ctx := context.Background()
	for i, dsn := range []string{pgtest.New(t), pgtest.New(t)} {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `CREATE TABLE marker (n int); INSERT INTO marker VALUES (1)`); err != nil {
			t.Fatalf("database %d: %v", i, err)
		}
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM marker`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("database %d: %d rows, %v; want 1 row", i, n, err)
		}
	}
}

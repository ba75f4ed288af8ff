package sqlite_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcs-go/mcs/middleware/auth"
	_ "github.com/mcs-go/mcs/middleware/auth/sqlite" // registers "sqlite:" with auth.OpenStore
)

// A token saved by one process is there for the next, which opens the same
// file by URL.
func Example() {
	dir, _ := os.MkdirTemp("", "tokens")
	defer os.RemoveAll(dir)
	url := "sqlite:" + filepath.Join(dir, "tokens.db")
	ctx := context.Background()

	first, err := auth.OpenStore(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	expiry := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	_ = first.Save("github", `{"access_token":"..."}`, expiry)
	first.(io.Closer).Close()

	second, err := auth.OpenStore(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer second.(io.Closer).Close()
	v, exp, ok, err := second.Load("github")
	fmt.Println(v, exp.UTC(), ok, err)
	_, isLocker := second.(auth.TokenLocker)
	fmt.Println("refreshes once across processes:", isLocker)
	// Output:
	// {"access_token":"..."} 2030-01-01 00:00:00 +0000 UTC true <nil>
	// refreshes once across processes: true
}

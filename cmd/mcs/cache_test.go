package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain points the tool-table cache of every driver the tests build and the
// trust store, in this process and in the binaries they run, at a temporary
// directory, so that no test writes to the user's cache or configuration.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcs-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("MCS_CACHE_DIR", dir)
	os.Setenv(configEnv, dir) // the trust store too
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

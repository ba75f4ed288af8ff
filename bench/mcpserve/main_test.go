package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(serveEnv); spec != "" {
		kind, mode, _ := strings.Cut(spec, ",")
		if err := serve(kind, mode == "stateless"); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Every server answers add in both modes and the report has a row for each:
// the harness works. The figures of so short a run mean nothing.
func TestHarness(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{rounds: 1, duration: 100 * time.Millisecond, warmup: 10 * time.Millisecond, sessions: []int{1, 2},
		servers: kinds, modes: []bool{false, true}, exe: exe, exeArgs: []string{"-test.run=^$"}}
	var log bytes.Buffer
	results, err := run(context.Background(), cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(results) != 3*2*2 {
		t.Fatalf("%d results, want 12", len(results))
	}
	for _, r := range results {
		if r.Calls == 0 || r.CPU <= 0 || r.Wire <= 0 || r.Alloc == 0 {
			t.Errorf("%s %s N=%d: %+v; want calls, CPU, wire bytes and allocations", r.Server, modeName(r.Stateless), r.Sessions, r)
		}
	}
	var out bytes.Buffer
	report(&out, results)
	if rows := strings.Count(out.String(), "\n"); rows != 14 {
		t.Errorf("report has %d lines, want a header, its rule and 12 rows:\n%s", rows, out.String())
	}
}

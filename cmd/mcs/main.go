// Command mcs inspects, calls and composes MCS drivers from the terminal. The
// drivers and their middleware are declared in a stack file (mcs.toml, or
// --stack FILE); --openapi, --fs and --csv declare drivers without one. With
// neither, mcs runs its embedded demo: a pet store API on loopback and a small
// CSV data set.
//
//	mcs tools                    the tools of the stack
//	mcs describe TOOL            one tool and its parameters
//	mcs call TOOL key=value...   run a tool through the whole stack
//	mcs inspect                  explore and run the tools interactively
//	mcs prompt                   the system message a model gets
//	mcs process [FILE|-]         what a model reply would do
//	mcs health                   healthcheck of the stack
//	mcs serve-mcp [--http ADDR]  serve the stack's tools to MCP clients
//	mcs approvals list|show|approve|deny|run   the calls that wait for approval
//	mcs auth login|status|logout              sign in to the services the drivers use
//	mcs ui [--addr ADDR]         a web console for the stack
//
// Exit codes: 0 success, 1 a tool failed or was denied (health: WARNING or
// UNKNOWN), 2 a usage or stack error (health: ERROR), 3 the call waits for
// approval (mcs call), 130 interrupted (Ctrl-C).
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
)

func main() {
	tuneGC()
	// The first interrupt or SIGTERM ends the context (calls, questions, the
	// inspector and serve-mcp stop, the demo is cleaned up); a second one ends
	// the process at once. After an interrupt (Ctrl-C) mcs exits 130, as a
	// shell reports a command it interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	var interrupted atomic.Bool
	go func() {
		sig := <-sigs
		interrupted.Store(sig == os.Interrupt)
		signal.Stop(sigs) // the next signal has its default effect
		cancel()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	if interrupted.Load() {
		code = exitInterrupted
	}
	os.Exit(code)
}

// tuneGC trades memory for time, as suits a short-lived command: loading a large
// API description allocates much short-lived garbage, and collecting it less
// often saves a good part of the CPU time. A soft memory limit keeps the heap
// bounded. GOGC and GOMEMLIMIT set by the user win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(256 << 20)
	}
}

package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// isTerminal reports whether f is an *os.File connected to a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// progress shows "mcs: <what>..." on stderr, with the seconds elapsed, while a
// long operation runs, when stderr is a terminal; the returned stop clears the
// line and may be called more than once. When stderr is not a terminal it shows nothing.
func (a *app) progress(what string) (stop func()) {
	if !a.terminal(a.stderr) {
		return func() {}
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	fmt.Fprintf(a.stderr, "\rmcs: %s...", what)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintf(a.stderr, "\rmcs: %s... %.1fs", what, time.Since(start).Seconds())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			fmt.Fprint(a.stderr, "\r\033[K")
		})
	}
}

package mcstest

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// The rules every kind of implementation is checked against.
const (
	// RuleNoPanic: no method panics on the kit's inputs.
	RuleNoPanic = "no-panic"
	// RuleConcurrent: calls from several goroutines at once give the results of
	// sequential calls.
	RuleConcurrent = "concurrent"
)

// Error is the error the checks return: every rule broken, in the order found.
type Error struct {
	// Kind is what was checked: "ToolDriver", "WireFormat", "PromptStrategy" or
	// "ToolMiddleware".
	Kind string
	// Violations are the rules broken, with what was seen; at most a few per
	// rule.
	Violations []Violation
}

// Violation is one broken rule.
type Violation struct {
	Rule   string // one of the Rule constants
	Detail string // what was seen, and where
}

// Error lists the violations, one a line, each as "rule: detail".
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcstest: the %s broke %d rule(s):", e.Kind, len(e.Rules()))
	for _, v := range e.Violations {
		fmt.Fprintf(&b, "\n\t%s: %s", v.Rule, v.Detail)
	}
	return b.String()
}

// Rules returns the names of the rules broken, each once, in the order found.
func (e *Error) Rules() []string {
	var out []string
	for _, v := range e.Violations {
		if !contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

// Broke reports whether rule is among the violations.
func (e *Error) Broke(rule string) bool { return contains(e.Rules(), rule) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// maxPerRule bounds the violations kept per rule, so that an implementation that
// breaks a rule for every input gives a readable error.
const maxPerRule = 3

// report collects violations; it is safe for concurrent use.
type report struct {
	mu    sync.Mutex
	kind  string
	v     []Violation
	count map[string]int
}

func newReport(kind string) *report { return &report{kind: kind, count: map[string]int{}} }

// fail records a violation of rule.
func (r *report) fail(rule, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count[rule]++
	if r.count[rule] > maxPerRule {
		return
	}
	r.v = append(r.v, Violation{Rule: rule, Detail: fmt.Sprintf(format, args...)})
}

// err returns the report as an *Error, or nil when no rule was broken.
func (r *report) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.v) == 0 {
		return nil
	}
	return &Error{Kind: r.kind, Violations: r.v}
}

// try runs f, reporting a panic under RuleNoPanic with what; it reports whether f
// returned normally.
func (r *report) try(what string, f func()) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			r.fail(RuleNoPanic, "%s panicked: %v", what, v)
			ok = false
		}
	}()
	f()
	return true
}

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// concurrently runs f from n goroutines at once and waits for them.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

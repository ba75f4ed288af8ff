package permission_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/permission"
)

func TestCapability(t *testing.T) {
	if permission.Capability != "consent" {
		t.Errorf("Capability = %q, want %q", permission.Capability, "consent")
	}
}

func allowAll(context.Context, string, map[string]any) (bool, error) { return true, nil }
func denyAll(context.Context, string, map[string]any) (bool, error)  { return false, nil }

var errHandler = errors.New("handler broke")

// run sends one call through a chain of m around a terminal that records
// whether it ran.
func run(ctx context.Context, m mcs.ToolMiddleware, name string, args map[string]any) (res any, err error, executed bool) {
	call := mcs.Chain(func(context.Context, string, map[string]any) (any, error) {
		executed = true
		return "executed", nil
	}, m)
	res, err = call(ctx, name, args)
	return res, err, executed
}

func TestDecisions(t *testing.T) {
	userDenied := func(name string) mcs.Signal {
		return mcs.Signal{Kind: mcs.CodeDenied, Tool: name, Message: "User denied execution of '" + name + "'."}
	}
	policyDenied := func(name string) mcs.Signal {
		return mcs.Signal{Kind: mcs.CodeDenied, Tool: name, Message: "Execution of '" + name + "' was denied by policy."}
	}
	tests := []struct {
		name       string
		rules      []permission.Rule
		handler    permission.ConsentFunc
		tool       string
		want       any               // result when the call succeeds
		wantReason permission.Reason // reason when it fails
		wantIs     error
		asked      bool
	}{
		{name: "allow rule runs without a handler", rules: []permission.Rule{permission.Allow("read_*")}, tool: "read_file", want: "executed"},
		{name: "deny rule denies without asking", rules: []permission.Rule{permission.Deny("delete_*")}, handler: allowAll, tool: "delete_file", want: policyDenied("delete_file")},
		{name: "first match wins: allow before deny", rules: []permission.Rule{permission.Allow("read_*"), permission.Deny("*")}, tool: "read_file", want: "executed"},
		{name: "first match wins: deny before allow", rules: []permission.Rule{permission.Deny("delete_*"), permission.Allow("*")}, handler: allowAll, tool: "delete_file", want: policyDenied("delete_file")},
		{name: "later rule matches", rules: []permission.Rule{permission.Deny("delete_*"), permission.Allow("*_file")}, tool: "write_file", want: "executed"},
		{name: "glob covers the whole name", rules: []permission.Rule{permission.Allow("read")}, handler: denyAll, tool: "read_file", want: userDenied("read_file"), asked: true},
		{name: "character classes", rules: []permission.Rule{permission.Allow("[rw]?ad_file")}, tool: "read_file", want: "executed"},
		{name: "no match asks: yes", rules: []permission.Rule{permission.Deny("delete_*")}, handler: allowAll, tool: "write_file", want: "executed", asked: true},
		{name: "no match asks: no", handler: denyAll, tool: "write_file", want: userDenied("write_file"), asked: true},
		{name: "no match and no handler fails closed", rules: []permission.Rule{permission.Allow("read_*")}, tool: "write_file", wantReason: permission.ReasonNoHandler},
		{name: "handler error fails closed", handler: func(context.Context, string, map[string]any) (bool, error) {
			return true, errHandler
		}, tool: "write_file", wantReason: permission.ReasonHandlerError, wantIs: errHandler, asked: true},
		{name: "handler panic fails closed", handler: func(context.Context, string, map[string]any) (bool, error) {
			panic("oops")
		}, tool: "write_file", wantReason: permission.ReasonHandlerError, asked: true},
		{name: "malformed rule fails closed", rules: []permission.Rule{permission.Allow("[")}, handler: allowAll, tool: "write_file", wantReason: permission.ReasonInvalidRule},
		{name: "malformed rule after a match is not reached", rules: []permission.Rule{permission.Allow("write_*"), permission.Deny("[")}, tool: "write_file", want: "executed"},
	}
	modes := []struct {
		name string
		opts []permission.Option
		ctx  func(t *testing.T) context.Context
	}{
		{"on the caller", nil, func(*testing.T) context.Context { return context.Background() }},
		{"cancellable context", nil, func(t *testing.T) context.Context { return t.Context() }},
		{"with timeout", []permission.Option{permission.WithTimeout(time.Hour)}, func(*testing.T) context.Context { return context.Background() }},
	}
	for _, mode := range modes {
		for _, tt := range tests {
			t.Run(mode.name+"/"+tt.name, func(t *testing.T) {
				var asked atomic.Bool
				var handler permission.ConsentFunc
				if tt.handler != nil {
					handler = func(ctx context.Context, name string, args map[string]any) (bool, error) {
						asked.Store(true)
						return tt.handler(ctx, name, args)
					}
				}
				m := permission.New(handler, append([]permission.Option{permission.WithRules(tt.rules...)}, mode.opts...)...)
				res, err, executed := run(mode.ctx(t), m, tt.tool, map[string]any{"path": "a.txt"})
				if asked.Load() != tt.asked {
					t.Errorf("handler asked = %v, want %v", asked.Load(), tt.asked)
				}
				if tt.wantReason != "" {
					var ce *permission.ConsentError
					if !errors.As(err, &ce) || ce.Reason != tt.wantReason || ce.Tool != tt.tool {
						t.Fatalf("err = %v, want a *ConsentError for %q with reason %q", err, tt.tool, tt.wantReason)
					}
					if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
						t.Errorf("err = %v, want it to wrap %v", err, tt.wantIs)
					}
					if executed || res != nil {
						t.Errorf("failed call executed = %v, result = %v; want false, nil", executed, res)
					}
					return
				}
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if diff := cmp.Diff(tt.want, res); diff != "" {
					t.Errorf("result (-want +got):\n%s", diff)
				}
				if wantExec := tt.want == "executed"; executed != wantExec {
					t.Errorf("executed = %v, want %v", executed, wantExec)
				}
			})
		}
	}
}

func TestZeroMiddlewareFailsClosed(t *testing.T) {
	var m permission.Middleware
	_, err, executed := run(context.Background(), &m, "read_file", nil)
	var ce *permission.ConsentError
	if !errors.As(err, &ce) || ce.Reason != permission.ReasonNoHandler || executed {
		t.Errorf("zero Middleware: err = %v, executed = %v; want no_handler, false", err, executed)
	}
}

func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var handlerErr error
		handler := func(ctx context.Context, _ string, _ map[string]any) (bool, error) {
			<-ctx.Done() // a person who never answers; the handler honours ctx
			handlerErr = ctx.Err()
			return false, ctx.Err()
		}
		m := permission.New(handler, permission.WithTimeout(30*time.Second))
		start := time.Now()
		_, err, executed := run(context.Background(), m, "write_file", nil)
		if waited := time.Since(start); waited != 30*time.Second {
			t.Errorf("waited %v, want 30s", waited)
		}
		var ce *permission.ConsentError
		if !errors.As(err, &ce) || ce.Reason != permission.ReasonTimeout || ce.Timeout != 30*time.Second {
			t.Fatalf("err = %v, want a timeout *ConsentError", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
		}
		if !strings.Contains(err.Error(), "no consent decision within 30s") {
			t.Errorf("err = %q does not say why", err)
		}
		if executed {
			t.Error("tool executed after a timeout")
		}
		synctest.Wait()
		if !errors.Is(handlerErr, context.DeadlineExceeded) {
			t.Errorf("handler's context ended with %v, want DeadlineExceeded", handlerErr)
		}
	})
}

func TestLateAnswerIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		answered := make(chan struct{})
		handler := func(context.Context, string, map[string]any) (bool, error) {
			<-release // ignores ctx: answers whenever it likes
			defer close(answered)
			return true, nil
		}
		m := permission.New(handler, permission.WithTimeout(time.Second))
		_, err, executed := run(context.Background(), m, "write_file", nil)
		var ce *permission.ConsentError
		if !errors.As(err, &ce) || ce.Reason != permission.ReasonTimeout {
			t.Fatalf("err = %v, want a timeout *ConsentError", err)
		}
		close(release)
		<-answered
		synctest.Wait()
		if executed {
			t.Error("a late yes ran the tool")
		}
	})
}

func TestAnswerAfterContextEndedIsIgnored(t *testing.T) {
	// The handler ends the call's context, then answers yes. On the goroutine path
	// the answer and the end of the context are both ready when the middleware
	// looks, and it may pick the answer: in neither mode may the tool run.
	modes := []struct {
		name string
		opts []permission.Option
	}{
		{"on the caller", nil},
		{"with timeout", []permission.Option{permission.WithTimeout(time.Hour)}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			handler := func(context.Context, string, map[string]any) (bool, error) {
				cancel()
				return true, nil
			}
			_, err, executed := run(ctx, permission.New(handler, mode.opts...), "write_file", nil)
			var ce *permission.ConsentError
			if executed || !errors.As(err, &ce) || ce.Reason != permission.ReasonCanceled || !errors.Is(err, context.Canceled) {
				t.Fatalf("executed = %v, err = %v; want false and a canceled *ConsentError", executed, err)
			}
		})
	}
}

func TestCanceledWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cause := errors.New("user closed the chat")
		ctx, cancel := context.WithCancelCause(context.Background())
		asked := make(chan struct{})
		handler := func(hctx context.Context, _ string, _ map[string]any) (bool, error) {
			close(asked)
			<-hctx.Done()
			return false, hctx.Err()
		}
		m := permission.New(handler, permission.WithTimeout(time.Minute))
		go func() {
			<-asked
			cancel(cause)
		}()
		_, err, executed := run(ctx, m, "write_file", nil)
		var ce *permission.ConsentError
		if !errors.As(err, &ce) || ce.Reason != permission.ReasonCanceled {
			t.Fatalf("err = %v, want a canceled *ConsentError", err)
		}
		if !errors.Is(err, cause) {
			t.Errorf("err = %v, want it to wrap the cancel cause", err)
		}
		if executed {
			t.Error("tool executed after cancellation")
		}
	})
}

func TestAsyncHandlerGetsACopy(t *testing.T) {
	handler := func(_ context.Context, _ string, args map[string]any) (bool, error) {
		args["path"] = "/etc/passwd"
		args["nested"].(map[string]any)["k"] = "changed"
		return true, nil
	}
	m := permission.New(handler, permission.WithTimeout(time.Minute))
	var got map[string]any
	call := mcs.Chain(func(_ context.Context, _ string, args map[string]any) (any, error) {
		got = args
		return "ok", nil
	}, m)
	if _, err := call(context.Background(), "write_file", map[string]any{"path": "a.txt", "nested": map[string]any{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"path": "a.txt", "nested": map[string]any{"k": "v"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool arguments (-want +got):\n%s", diff)
	}
}

func TestSetConsentHandler(t *testing.T) {
	m := permission.New(nil)
	ctx := context.Background()
	check := func(step string, wantExecuted bool, wantReason permission.Reason) {
		t.Helper()
		_, err, executed := run(ctx, m, "write_file", nil)
		var ce *permission.ConsentError
		if wantReason != "" && (!errors.As(err, &ce) || ce.Reason != wantReason) {
			t.Errorf("%s: err = %v, want reason %q", step, err, wantReason)
		}
		if wantReason == "" && err != nil {
			t.Errorf("%s: err = %v", step, err)
		}
		if executed != wantExecuted {
			t.Errorf("%s: executed = %v, want %v", step, executed, wantExecuted)
		}
	}
	check("nil handler", false, permission.ReasonNoHandler)
	m.SetConsentHandler(allowAll)
	check("allow", true, "")
	m.SetConsentHandler(denyAll)
	check("deny", false, "")
	m.SetConsentHandler(nil)
	check("removed", false, permission.ReasonNoHandler)

	// Replacing the handler races with calls.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				run(ctx, m, "write_file", nil)
			}
		})
		wg.Go(func() {
			for i := range 200 {
				if i%2 == 0 {
					m.SetConsentHandler(allowAll)
				} else {
					m.SetConsentHandler(nil)
				}
			}
		})
	}
	wg.Wait()
}

func TestRule(t *testing.T) {
	tests := []struct {
		rule      permission.Rule
		pattern   string
		allows    bool
		str       string
		wantValid bool
	}{
		{permission.Allow("read_*"), "read_*", true, `Allow("read_*")`, true},
		{permission.Deny("delete_*"), "delete_*", false, `Deny("delete_*")`, true},
		{permission.Deny("[a-"), "[a-", false, `Deny("[a-")`, false},
		{permission.Allow(`a\`), `a\`, true, `Allow("a\\")`, false},
	}
	for _, tt := range tests {
		t.Run(tt.str, func(t *testing.T) {
			if tt.rule.Pattern() != tt.pattern || tt.rule.Allows() != tt.allows || tt.rule.String() != tt.str {
				t.Errorf("rule = %q %v %q; want %q %v %q", tt.rule.Pattern(), tt.rule.Allows(), tt.rule.String(), tt.pattern, tt.allows, tt.str)
			}
			err := tt.rule.Validate()
			if (err == nil) != tt.wantValid {
				t.Errorf("Validate() = %v, want valid %v", err, tt.wantValid)
			}
			if err != nil && !strings.Contains(err.Error(), tt.str) {
				t.Errorf("Validate() = %q does not name the rule", err)
			}
		})
	}
	m := permission.New(nil, permission.WithRules(permission.Allow("a")), permission.WithRules(permission.Deny("b")))
	rules := m.Rules()
	if diff := cmp.Diff([]string{`Allow("a")`, `Deny("b")`}, []string{rules[0].String(), rules[1].String()}); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	rules[0] = permission.Deny("a")
	if !m.Rules()[0].Allows() {
		t.Error("Rules returned shared state")
	}
}

func TestConsentErrorMessages(t *testing.T) {
	tests := []struct {
		err  *permission.ConsentError
		want string
	}{
		{&permission.ConsentError{Tool: "x", Reason: permission.ReasonNoHandler},
			`permission: tool "x" not executed: no rule matched and no consent handler is set (set one with permission.New or SetConsentHandler, or allow the tool with a rule)`},
		{&permission.ConsentError{Tool: "x", Reason: permission.ReasonHandlerError, Err: errHandler},
			`permission: tool "x" not executed: the consent handler failed: handler broke`},
		{&permission.ConsentError{Tool: "x", Reason: permission.ReasonTimeout, Timeout: time.Minute, Err: context.DeadlineExceeded},
			`permission: tool "x" not executed: no consent decision within 1m0s`},
		{&permission.ConsentError{Tool: "x", Reason: permission.ReasonCanceled, Err: context.Canceled},
			`permission: tool "x" not executed: the call ended while waiting for consent: context canceled`},
		{&permission.ConsentError{Tool: "x", Reason: permission.ReasonInvalidRule, Err: errHandler},
			`permission: tool "x" not executed: invalid permission rule: handler broke`},
		{&permission.ConsentError{Tool: "x", Reason: "other"},
			`permission: tool "x" not executed: no consent decision: unknown error`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestDeniedHelpers(t *testing.T) {
	want := mcs.Signal{Kind: mcs.CodeDenied, Tool: "t", Message: "User denied execution of 't'."}
	denied := permission.Denied("t", permission.DeniedMessage("t"))
	if diff := cmp.Diff(want, denied); diff != "" {
		t.Errorf("Denied (-want +got):\n%s", diff)
	}
	if b, err := json.Marshal(denied); err != nil || string(b) != `{"message":"User denied execution of 't'.","permission_denied":true,"tool":"t"}` {
		t.Errorf("Denied as JSON = %s, %v; want the JSON the model has always read", b, err)
	}
	for _, tt := range []struct {
		v    any
		want bool
	}{
		{want, true},
		{&want, true},
		{map[string]any{"permission_denied": true, "tool": "t", "message": "m"}, true}, // the shape before Signal
		{mcs.Signal{Kind: mcs.CodeChallenge}, false},
		{map[string]any{"permission_denied": false}, false},
		{map[string]any{"permission_denied": "true"}, false},
		{"permission_denied", false},
		{nil, false},
	} {
		if got := permission.IsDenied(tt.v); got != tt.want {
			t.Errorf("IsDenied(%v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestNegativeTimeoutMeansNone(t *testing.T) {
	m := permission.New(allowAll, permission.WithTimeout(-time.Second))
	if _, err, executed := run(context.Background(), m, "write_file", nil); err != nil || !executed {
		t.Errorf("err = %v, executed = %v; want nil, true", err, executed)
	}
}

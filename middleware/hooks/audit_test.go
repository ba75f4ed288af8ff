package hooks_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/hooks"
)

// auditCall is one call made in an audit test.
type auditCall struct {
	name string
	args map[string]any
}

// runCalls sends calls through a hooks middleware with set installed; each call
// takes 1.5 s of simulated time. read_file succeeds, fail fails and deny is denied.
func runCalls(t *testing.T, set hooks.Set, calls []auditCall) {
	t.Helper()
	m := hooks.New(hooks.WithSet(set))
	call := mcs.Chain(func(ctx context.Context, name string, args map[string]any) (any, error) {
		time.Sleep(1500 * time.Millisecond)
		return (&fakeDriver{}).ExecuteTool(ctx, name, args)
	}, m)
	for _, c := range calls {
		call(context.Background(), c.name, c.args)
	}
}

func decodeLines(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestSlogAudit(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	tests := []struct {
		name string
		opts []hooks.AuditOption
		call auditCall
		want map[string]any
	}{
		{
			name: "ok",
			call: auditCall{"read_file", map[string]any{"path": "a.txt"}},
			want: map[string]any{"level": "INFO", "msg": "tool call", "tool": "read_file",
				"args": map[string]any{"path": "a.txt"}, "duration": 1.5e9, "outcome": "ok"},
		},
		{
			name: "error",
			call: auditCall{"fail", map[string]any{}},
			want: map[string]any{"level": "WARN", "msg": "tool call", "tool": "fail",
				"duration": 1.5e9, "outcome": "error", "error": "disk on fire"},
		},
		{
			name: "denied",
			call: auditCall{"deny", nil},
			want: map[string]any{"level": "WARN", "msg": "tool call", "tool": "deny",
				"duration": 1.5e9, "outcome": "denied"},
		},
		{
			name: "sensitive keys are redacted at every depth",
			call: auditCall{"read_file", map[string]any{
				"path":        "a.txt",
				"Password":    "hunter2",
				"api-key":     "k",
				"accessToken": "t",
				"request": map[string]any{
					"headers": map[string]string{"Authorization": "Bearer x", "Accept": "*/*"},
					"list":    []any{map[string]any{"client_secret": "s", "id": 1.0}},
				},
				"raw":    json.RawMessage(`{"token":"abc","n":1}`),
				"bad":    json.RawMessage(`{not json`),
				"ids":    []int{1, 2},
				"pair":   [2]string{"a", "b"},
				"byInt":  map[int]string{1: "x"},
				"nilMap": map[string]any(nil),
			}},
			want: map[string]any{"level": "INFO", "msg": "tool call", "tool": "read_file",
				"args": map[string]any{
					"path": "a.txt", "Password": "[REDACTED]", "api-key": "[REDACTED]", "accessToken": "[REDACTED]",
					"request": map[string]any{
						"headers": map[string]any{"Authorization": "[REDACTED]", "Accept": "*/*"},
						"list":    []any{map[string]any{"client_secret": "[REDACTED]", "id": 1.0}},
					},
					"raw":    map[string]any{"token": "[REDACTED]", "n": 1.0},
					"bad":    "{not json",
					"ids":    []any{1.0, 2.0},
					"pair":   []any{"a", "b"},
					"byInt":  map[string]any{"1": "x"},
					"nilMap": nil,
				},
				"duration": 1.5e9, "outcome": "ok"},
		},
		{
			name: "custom redact keys replace the defaults",
			opts: []hooks.AuditOption{hooks.WithRedactKeys("PIN", "")},
			call: auditCall{"read_file", map[string]any{"path": "a.txt", "card-pin": "1234", "password": "visible"}},
			want: map[string]any{"level": "INFO", "msg": "tool call", "tool": "read_file",
				"args":     map[string]any{"path": "a.txt", "card-pin": "[REDACTED]", "password": "visible"},
				"duration": 1.5e9, "outcome": "ok"},
		},
		{
			name: "long strings are cut on a rune boundary",
			opts: []hooks.AuditOption{hooks.WithMaxValueLen(5)},
			call: auditCall{"read_file", map[string]any{"path": "ééé", "content": []byte("0123456789"), "digest": [4]byte{1, 2, 3, 4}}},
			want: map[string]any{"level": "INFO", "msg": "tool call", "tool": "read_file",
				"args":     map[string]any{"path": "éé…(2 more bytes)", "content": "[10 bytes]", "digest": "[4 bytes]"},
				"duration": 1.5e9, "outcome": "ok"},
		},
		{
			name: "default cut",
			call: auditCall{"read_file", map[string]any{"path": long}},
			want: map[string]any{"level": "INFO", "msg": "tool call", "tool": "read_file",
				"args":     map[string]any{"path": strings.Repeat("é", 128) + "…(144 more bytes)"},
				"duration": 1.5e9, "outcome": "ok"},
		},
		{
			name: "no cut",
			opts: []hooks.AuditOption{hooks.WithMaxValueLen(0)},
			call: auditCall{"read_file", map[string]any{"path": long}},
			want: map[string]any{"level": "INFO", "msg": "tool call", "tool": "read_file",
				"args": map[string]any{"path": long}, "duration": 1.5e9, "outcome": "ok"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var buf bytes.Buffer
				logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{
					ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
						if len(groups) == 0 && a.Key == slog.TimeKey {
							return slog.Attr{}
						}
						return a
					},
				}))
				runCalls(t, hooks.SlogAudit(logger, tt.opts...), []auditCall{tt.call})
				got := decodeLines(t, buf.Bytes())
				if diff := cmp.Diff([]map[string]any{tt.want}, got); diff != "" {
					t.Errorf("records (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func TestSlogAuditDoesNotChangeTheCall(t *testing.T) {
	args := map[string]any{"password": "hunter2", "nested": map[string]any{"token": "t"}}
	var seen map[string]any
	m := hooks.New(hooks.WithSet(hooks.SlogAudit(slog.New(slog.DiscardHandler))))
	call := mcs.Chain(func(_ context.Context, _ string, a map[string]any) (any, error) {
		seen = a
		return "ok", nil
	}, m)
	call(context.Background(), "t", args)
	want := map[string]any{"password": "hunter2", "nested": map[string]any{"token": "t"}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("tool arguments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("caller's arguments (-want +got):\n%s", diff)
	}
}

func readAuditFile(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeLines(t, data)
}

func TestAuditFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		af, err := hooks.OpenAuditFile(path)
		if err != nil {
			t.Fatal(err)
		}
		runCalls(t, af.Hooks(), []auditCall{
			{"read_file", map[string]any{"path": "a.txt", "token": "secret"}},
			{"fail", map[string]any{}},
			{"deny", map[string]any{"n": math.NaN()}},
		})
		if err := af.Sync(); err != nil {
			t.Errorf("Sync: %v", err)
		}
		if err := af.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		start := time.Now().Add(-4500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		want := []map[string]any{
			{"time": start, "tool": "read_file", "args": map[string]any{"path": "a.txt", "token": "[REDACTED]"},
				"duration_ms": 1500.0, "outcome": "ok"},
			{"time": time.Now().Add(-3 * time.Second).UTC().Format(time.RFC3339Nano), "tool": "fail",
				"args": map[string]any{}, "duration_ms": 1500.0, "outcome": "error", "error": "disk on fire"},
			{"time": time.Now().Add(-1500 * time.Millisecond).UTC().Format(time.RFC3339Nano), "tool": "deny",
				"args":        map[string]any{"_unencodable": "json: unsupported value: NaN"},
				"duration_ms": 1500.0, "outcome": "denied"},
		}
		if diff := cmp.Diff(want, readAuditFile(t, path)); diff != "" {
			t.Errorf("lines (-want +got):\n%s", diff)
		}
		if runtime.GOOS != "windows" {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
			}
		}

		// Reopening appends.
		af, err = hooks.OpenAuditFile(path)
		if err != nil {
			t.Fatal(err)
		}
		runCalls(t, af.Hooks(), []auditCall{{"read_file", map[string]any{"path": "b.txt"}}})
		if err := af.Close(); err != nil {
			t.Fatal(err)
		}
		lines := readAuditFile(t, path)
		if len(lines) != 4 || lines[0]["tool"] != "read_file" || lines[3]["args"].(map[string]any)["path"] != "b.txt" {
			t.Errorf("after reopening got %d lines: %v", len(lines), lines)
		}

		// After Close: a second Close, Sync and late calls report fs.ErrClosed.
		if err := af.Close(); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("second Close = %v, want fs.ErrClosed", err)
		}
		if err := af.Sync(); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("Sync after Close = %v, want fs.ErrClosed", err)
		}
		if err := af.Err(); err != nil {
			t.Errorf("Err before a late call = %v, want nil", err)
		}
		runCalls(t, af.Hooks(), []auditCall{{"read_file", map[string]any{"path": "late"}}})
		if err := af.Err(); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("Err after a late call = %v, want fs.ErrClosed", err)
		}
		if n := len(readAuditFile(t, path)); n != 4 {
			t.Errorf("a late call changed the file: %d lines, want 4", n)
		}
	})
}

func TestAuditFileConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	af, err := hooks.OpenAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := hooks.New(hooks.WithSet(af.Hooks()))
	call := mcs.Chain((&fakeDriver{}).ExecuteTool, m)
	const callers, callsEach = 8, 40
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for j := range callsEach {
				// A long value makes torn lines likely if writes interleaved.
				call(context.Background(), "read_file", map[string]any{
					"path": fmt.Sprintf("%d-%d", i, j), "pad": strings.Repeat("x", 3000),
				})
			}
		})
	}
	wg.Wait()
	if err := af.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readAuditFile(t, path)
	if len(lines) != callers*callsEach {
		t.Fatalf("got %d lines, want %d", len(lines), callers*callsEach)
	}
	seen := map[any]bool{}
	for _, l := range lines {
		seen[l["args"].(map[string]any)["path"]] = true
	}
	if len(seen) != callers*callsEach {
		t.Errorf("got %d distinct calls, want %d", len(seen), callers*callsEach)
	}
}

func TestOpenAuditFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, path, want string
	}{
		{"directory", dir, "is not a regular file"},
		{"missing parent", filepath.Join(dir, "missing", "audit.jsonl"), "open audit file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			af, err := hooks.OpenAuditFile(tt.path)
			if err == nil {
				af.Close()
				t.Fatal("OpenAuditFile succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not contain %q and the path", err, tt.want)
			}
		})
	}
}

func TestDefaultRedactKeysIsACopy(t *testing.T) {
	k := hooks.DefaultRedactKeys()
	k[0] = "changed"
	if hooks.DefaultRedactKeys()[0] != "password" {
		t.Error("DefaultRedactKeys returned shared state")
	}
}

// TestAuditErrorProse: an error that names a secret-sounding scheme in quotes is
// logged as it is, and a real secret in an error is still redacted.
func TestAuditErrorProse(t *testing.T) {
	for _, tt := range []struct{ err, want string }{
		{`credential for security scheme "api_key": auth: no credential (the provider returned an empty token)`,
			`credential for security scheme "api_key": auth: no credential (the provider returned an empty token)`},
		{`upstream echoed {"api_key": "sk-live-123"}`, `upstream echoed {"api_key": "[REDACTED]"}`},
		{`request failed: Authorization: Bearer eyJhbGciOi.x`, `request failed: Authorization: Bearer [REDACTED]`},
		{`Authorization: Bearer xyz`, `Authorization: Bearer [REDACTED]`},
		{`api_key=abc123 was rejected`, `api_key=[REDACTED] was rejected`},
		{`bad request: url=https://x.test/?a=1&password=p4ss`, `bad request: url=https://x.test/?a=1&password=[REDACTED]`},
	} {
		var buf bytes.Buffer
		m := hooks.New(hooks.WithSet(hooks.SlogAudit(slog.New(slog.NewJSONHandler(&buf, nil)))))
		mcs.Chain(func(context.Context, string, map[string]any) (any, error) {
			return nil, errors.New(tt.err)
		}, m)(context.Background(), "addPet", nil)
		lines := decodeLines(t, buf.Bytes())
		if len(lines) != 1 {
			t.Fatalf("%d records, want 1", len(lines))
		}
		if got := lines[0]["error"]; got != tt.want {
			t.Errorf("error of %q\n got %q\nwant %q", tt.err, got, tt.want)
		}
	}
}

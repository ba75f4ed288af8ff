package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/middleware/hooks"
)

// Hooks print each call of a driver before and after it runs.
func ExampleNew() {
	m := hooks.New(
		hooks.WithPre(func(_ context.Context, name string, args map[string]any) {
			fmt.Println("pre:", name, args)
		}),
		hooks.WithPost(func(_ context.Context, name string, _ map[string]any, result any) {
			fmt.Println("post:", name, "->", result)
		}),
		hooks.WithFailure(func(_ context.Context, name string, _ map[string]any, err error) {
			fmt.Println("failure:", name, "->", err)
		}),
	)
	d := mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(m))

	resp := d.ProcessLLMResponse(context.Background(),
		`{"tool":"read_file","arguments":{"path":"notes.txt"}}`+"\n"+`{"tool":"fail","arguments":{}}`)
	fmt.Println("executed:", resp.CallExecuted, "failed:", resp.CallFailed)
	// Output:
	// pre: read_file map[path:notes.txt]
	// post: read_file -> read_file done: notes.txt
	// pre: fail map[]
	// failure: fail -> disk on fire
	// executed: true failed: true
}

// Hooks can be added and removed while the driver is in use.
func ExampleMiddleware_AddPre() {
	m := hooks.New()
	d := mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(m))
	ctx := context.Background()

	remove := m.AddPre(func(_ context.Context, name string, _ map[string]any) {
		fmt.Println("calling", name)
	})
	d.ExecuteTool(ctx, "read_file", map[string]any{"path": "a.txt"})
	remove()
	d.ExecuteTool(ctx, "read_file", map[string]any{"path": "b.txt"}) // no longer printed
	// Output:
	// calling read_file
}

// An audit log with one record per call; secrets in the arguments are redacted.
func ExampleSlogAudit() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "duration" { // vary from run to run
				return slog.Attr{}
			}
			return a
		},
	}))
	m := hooks.New(hooks.WithSet(hooks.SlogAudit(logger)))
	d := mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(m))

	d.ProcessLLMResponse(context.Background(),
		`{"tool":"write_file","arguments":{"path":"notes.txt","api_key":"sk-123"}}`)
	d.ProcessLLMResponse(context.Background(), `{"tool":"fail","arguments":{}}`)
	// Output:
	// level=INFO msg="tool call" tool=write_file driver=fake args.api_key=[REDACTED] args.path=notes.txt outcome=ok
	// level=WARN msg="tool call" tool=fail driver=fake outcome=error error="disk on fire"
}

// A JSON-lines audit file: one line per call, appended, synced on Close.
func ExampleOpenAuditFile() {
	dir, err := os.MkdirTemp("", "audit")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.jsonl")

	af, err := hooks.OpenAuditFile(path)
	if err != nil {
		log.Fatal(err)
	}
	m := hooks.New(hooks.WithSet(af.Hooks()))
	d := mcs.NewBaseDriver(&fakeDriver{}, mcs.WithMiddleware(m))
	d.ExecuteTool(context.Background(), "read_file", map[string]any{"path": "a.txt", "password": "hunter2"})
	if err := af.Close(); err != nil {
		log.Fatal(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(data, &line); err != nil {
		log.Fatal(err)
	}
	fmt.Println(line["tool"], line["args"], line["outcome"])
	// Output:
	// read_file map[password:[REDACTED] path:a.txt] ok
}

// Command quickstart shows the MCS kernel end to end: a small in-process tool
// driver, a logging middleware and a consent middleware, and a few realistic model
// replies processed by a BaseDriver.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/mcs-go/mcs"
)

// notes is a ToolDriver over an in-memory notebook.
type notes struct {
	mu    sync.Mutex
	items map[string]string
}

var _ mcs.ToolDriver = (*notes)(nil)

func (n *notes) Meta() mcs.Meta {
	return mcs.Meta{ID: "quickstart/notes", Name: "Notes", Version: "1.0.0",
		Bindings: []mcs.Binding{{Capability: "notes", Adapter: "memory", SpecFormat: "builtin"}}}
}

func (n *notes) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{
		{Name: "list_notes", Description: "Lists the titles of all notes."},
		{Name: "read_note", Description: "Returns the text of one note.",
			Parameters: []mcs.Parameter{{Name: "title", Description: "Title of the note.", Required: true}}},
		{Name: "delete_note", Description: "Deletes a note.",
			Parameters: []mcs.Parameter{{Name: "title", Required: true}}},
	}, nil
}

func (n *notes) ExecuteTool(_ context.Context, name string, args map[string]any) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch name {
	case "list_notes":
		titles := make([]string, 0, len(n.items))
		for t := range n.items {
			titles = append(titles, t)
		}
		sort.Strings(titles)
		return map[string]any{"titles": titles}, nil
	case "read_note", "delete_note":
		title, _ := args["title"].(string)
		text, ok := n.items[title]
		if !ok {
			return nil, fmt.Errorf("no note titled %q; call list_notes to see the titles", title)
		}
		if name == "delete_note" {
			delete(n.items, title)
			return "deleted " + title, nil
		}
		return text, nil
	}
	return nil, errors.New("unknown tool " + name)
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// A logging middleware: observes every call and its outcome.
	logging := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		fmt.Fprintf(out, "  [log] -> %s %s\n", name, compact(args))
		res, err := next(ctx, name, args)
		if err != nil {
			fmt.Fprintf(out, "  [log] <- %s failed: %v\n", name, err)
		} else {
			fmt.Fprintf(out, "  [log] <- %s ok\n", name)
		}
		return res, err
	})
	// A consent-style middleware: deletions are refused in-band, so the model can
	// tell the user.
	consent := mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		if strings.HasPrefix(name, "delete_") {
			return map[string]any{"permission_denied": true, "tool": name,
				"message": "User denied execution of '" + name + "'."}, nil
		}
		return next(ctx, name, args)
	})

	driver := mcs.NewBaseDriver(&notes{items: map[string]string{
		"groceries": "milk, eggs, coffee",
		"ideas":     "a Go SDK for MCS",
	}}, mcs.WithMiddleware(logging, consent))

	sys, err := driver.SystemMessage(ctx, "any-model")
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "== system message (first lines)")
	for _, line := range strings.SplitN(sys, "\n", 5)[:4] {
		fmt.Fprintln(out, strings.TrimRight("  "+line, " "))
	}

	replies := []struct {
		title string
		reply any
	}{
		{"a text call", `Let me look. {"tool": "read_note", "arguments": {"title": "groceries"}}`},
		{"a fenced call with a trailing comma", "```json\n{\"tool\": \"list_notes\", \"arguments\": {},}\n```"},
		{"an OpenAI tool_calls message", map[string]any{
			"role": "assistant", "content": nil,
			"tool_calls": []any{map[string]any{"id": "call_7", "type": "function",
				"function": map[string]any{"name": "delete_note", "arguments": `{"title":"ideas"}`}}},
		}},
		{"an unknown tool", `{"tool": "send_email", "arguments": {"to": "bob@example.com"}}`},
		{"a failing call", `{"tool": "read_note", "arguments": {"title": "taxes"}}`},
	}
	for _, r := range replies {
		fmt.Fprintf(out, "\n== %s\n", r.title)
		resp := driver.ProcessLLMResponse(ctx, r.reply)
		fmt.Fprintf(out, "executed=%v failed=%v\n", resp.CallExecuted, resp.CallFailed)
		for _, c := range resp.Calls {
			if c.Err != nil {
				fmt.Fprintf(out, "call %s: error: %v\n", c.Name, c.Err)
			} else {
				fmt.Fprintf(out, "call %s: %s\n", c.Name, compact(c.Result))
			}
		}
		if resp.RetryPrompt != "" {
			fmt.Fprintf(out, "retry prompt: %s\n", strings.SplitN(resp.RetryPrompt, "\n", 2)[0])
		}
		if resp.Calls == nil {
			fmt.Fprintln(out, "(not this driver's call: nothing to append, the reply is the final answer)")
		}
		for _, m := range resp.Messages {
			fmt.Fprintf(out, "history: %s\n", compact(m))
		}
	}
	return nil
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

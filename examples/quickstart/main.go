// Command quickstart shows the MCS kernel end to end: a small in-process tool
// driver written as typed Go functions (package tools), a logging middleware and a consent middleware, and a few realistic model
// replies processed by a BaseDriver.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/tools"
)

// notebook is the system the tools reach: an in-memory set of notes.
type notebook struct {
	mu    sync.Mutex
	items map[string]string
}

// The tools' inputs: each exported field is a parameter, named by its json tag.
type (
	listNotes struct{}
	noteRef   struct {
		Title string `json:"title" description:"Title of the note."`
	}
	deleteRef struct {
		Title string `json:"title"`
	}
)

// toolDriver publishes the notebook's tools: typed Go functions, no name switch
// and no type assertions on a map of arguments.
func (n *notebook) toolDriver() *tools.Table {
	t := tools.New(mcs.Meta{ID: "quickstart/notes", Name: "Notes", Version: "1.0.0",
		Bindings: []mcs.Binding{{Capability: "notes", Adapter: "memory", SpecFormat: "builtin"}}})
	tools.Add(t, "list_notes", "Lists the titles of all notes.", n.list,
		tools.WithAnnotations(mcs.ToolAnnotations{ReadOnly: true}))
	tools.Add(t, "read_note", "Returns the text of one note.", n.read,
		tools.WithAnnotations(mcs.ToolAnnotations{ReadOnly: true}))
	tools.Add(t, "delete_note", "Deletes a note.", n.delete,
		tools.WithAnnotations(mcs.ToolAnnotations{Destructive: true}))
	return t
}

func (n *notebook) list(context.Context, listNotes) (map[string]any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	titles := make([]string, 0, len(n.items))
	for t := range n.items {
		titles = append(titles, t)
	}
	sort.Strings(titles)
	return map[string]any{"titles": titles}, nil
}

func (n *notebook) read(_ context.Context, in noteRef) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	text, ok := n.items[in.Title]
	if !ok {
		return "", fmt.Errorf("no note titled %q; call list_notes to see the titles", in.Title)
	}
	return text, nil
}

func (n *notebook) delete(_ context.Context, in deleteRef) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.items[in.Title]; !ok {
		return "", fmt.Errorf("no note titled %q; call list_notes to see the titles", in.Title)
	}
	delete(n.items, in.Title)
	return "deleted " + in.Title, nil
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
			return mcs.Signal{Kind: mcs.CodeDenied, Tool: name,
				Message: "User denied execution of '" + name + "'."}, nil
		}
		return next(ctx, name, args)
	})

	nb := &notebook{items: map[string]string{
		"groceries": "milk, eggs, coffee",
		"ideas":     "a Go SDK for MCS",
	}}
	driver := mcs.NewBaseDriver(nb.toolDriver(), mcs.WithMiddleware(logging, consent))

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

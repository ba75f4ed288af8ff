// Command bigapi shows a 1,000-operation API in a small prompt: a GitHub-shaped
// OpenAPI document and a Stripe-shaped one behind one orchestrator with
// namespacing and ToolSearch. The model sees one search tool and a compact
// index instead of 1,100 tool definitions, searches by words, and calls what it
// found; the calls reach a loopback server that stands in for the APIs.
//
//	go run ./examples/bigapi
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/budget"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/internal/apispec"
	"github.com/mcs-go/mcs/orchestrator"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// apis are the REST drivers of the GitHub-shaped document (ops operations) and
// the Stripe-shaped one, both sent to baseURL. A REST driver is safe to share:
// one loaded document can serve several orchestrators.
type apis struct{ github, stripe *rest.ToolDriver }

func newAPIs(ops int, baseURL string) (apis, error) {
	github, err := rest.NewToolDriver(rest.Config{Spec: apispec.GitHub(ops), BaseURL: baseURL})
	if err != nil {
		return apis{}, err
	}
	stripe, err := rest.NewToolDriver(rest.Config{Spec: apispec.Stripe(100), BaseURL: baseURL + "/stripe"})
	if err != nil {
		return apis{}, err
	}
	return apis{github, stripe}, nil
}

// newStack returns an orchestrator over the two APIs with the given layers.
func newStack(a apis, layers ...orchestrator.Layer) (*orchestrator.Orchestrator, error) {
	github, stripe := a.github, a.stripe
	o := orchestrator.New(orchestrator.Pipeline(layers...))
	if err := o.AddDriver("github", github); err != nil {
		return nil, err
	}
	if err := o.AddDriver("stripe", stripe); err != nil {
		return nil, err
	}
	return o, nil
}

func run(ctx context.Context, out io.Writer) error {
	// The loopback API: it echoes each request in one line.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"received": r.Method + " " + r.URL.RequestURI() + " " + string(body)})
	}))
	defer api.Close()

	a, err := newAPIs(1000, api.URL)
	if err != nil {
		return err
	}
	full, err := newStack(a, orchestrator.Namespacing())
	if err != nil {
		return err
	}
	o, err := newStack(a, orchestrator.Namespacing(), orchestrator.ToolSearch(5))
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		d    mcs.Driver
	}{{"every tool listed", full}, {"behind ToolSearch", o}} {
		b, err := budget.Measure(ctx, c.d, "")
		if err != nil {
			return err
		}
		size := "at most 8 KB"
		if b.SystemMessageBytes > 8<<10 {
			size = "more than 500 KB"
			if b.SystemMessageBytes <= 500<<10 {
				size = fmt.Sprintf("%d bytes", b.SystemMessageBytes)
			}
		}
		fmt.Fprintf(out, "%s: %d tools, system message %s, %d warnings\n", c.name, b.Tools, size, len(b.Warnings))
	}

	// Round 1: the model searches.
	reply := `I need the tool for that first.
{"tool": "tools__search", "arguments": {"query": "close an issue"}}`
	resp := o.ProcessLLMResponse(ctx, reply)
	if len(resp.Calls) != 1 || resp.Calls[0].Err != nil {
		return fmt.Errorf("search failed: %+v", resp)
	}
	found := resp.Calls[0].Result.(*orchestrator.SearchResult)
	fmt.Fprintf(out, "search %q found:\n", found.Query)
	for _, t := range found.Tools {
		fmt.Fprintf(out, "  %s: %s\n", t.Name, firstLine(t.Description))
	}

	// Round 2: the model calls what it found; the tool is listed now.
	reply = `{"tool": "github__issues_update", "arguments": {"owner": "octo", "repo": "hello", "issue_number": "7", "state": "closed", "state_reason": "completed"}}`
	resp = o.ProcessLLMResponse(ctx, reply)
	for _, c := range resp.Calls {
		if c.Err != nil {
			fmt.Fprintf(out, "call %s: error: %v\n", c.Name, c.Err)
			continue
		}
		fmt.Fprintf(out, "call %s: %s", c.Name, c.Result)
	}

	// A Stripe form body: deep objects as Stripe reads them.
	reply = `{"tool": "tools__search", "arguments": {"query": "create a customer"}}`
	if resp = o.ProcessLLMResponse(ctx, reply); len(resp.Calls) == 1 && resp.Calls[0].Err == nil {
		fmt.Fprintf(out, "search %q: first %s\n", "create a customer", resp.Calls[0].Result.(*orchestrator.SearchResult).Tools[0].Name)
	}
	reply = `{"tool": "stripe__PostCustomers", "arguments": {"email": "ada@example.com", "address": {"city": "Berlin"}, "metadata": {"order": 42}, "expand": ["tax"]}}`
	for _, c := range o.ProcessLLMResponse(ctx, reply).Calls {
		if c.Err != nil {
			fmt.Fprintf(out, "call %s: error: %v\n", c.Name, c.Err)
			continue
		}
		fmt.Fprintf(out, "call %s: %s", c.Name, c.Result)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

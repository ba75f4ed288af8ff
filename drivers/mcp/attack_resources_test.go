package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcs-go/mcs"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawRich is a hand-written HTTP server that declares resources and prompts;
// answer answers the methods of the test (and reports whether it did).
func rawRich(t *testing.T, answer func(w http.ResponseWriter, method string, id json.RawMessage) bool) string {
	return rawServer(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
		switch method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
			return true
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"raw","version":"1"}}}`, id)
			return true
		}
		return answer(w, method, id)
	}).URL
}

// countingWriter counts what a hostile server managed to send.
type countingWriter struct {
	w http.ResponseWriter
	n *atomic.Int64
}

func (c countingWriter) Header() http.Header  { return c.w.Header() }
func (c countingWriter) WriteHeader(code int) { c.w.WriteHeader(code) }
func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// A 1 GB blob is refused while it is read, long before it was all sent.
func TestAttackHugeBlob(t *testing.T) {
	const gigabyte = 1 << 30
	t.Run("HTTP", func(t *testing.T) {
		var sent atomic.Int64
		url := rawRich(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
			if method != "resources/read" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			flood(countingWriter{w, &sent}, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":"mem://huge","mimeType":"application/octet-stream","blob":"`, id), gigabyte)
			return true
		})
		d, err := NewToolDriver(testCtx(t), Config{URL: url, Resources: true, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		for _, read := range []func() error{
			func() error { _, err := d.ReadResource(testCtx(t), "mem://huge"); return err },
			func() error {
				_, err := d.ExecuteTool(testCtx(t), "resources__read", map[string]any{"uri": "mem://huge"})
				return err
			},
		} {
			err := read()
			if !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), "MaxMessageBytes") || !strings.Contains(err.Error(), "mem://huge") {
				t.Errorf("err = %v, want ErrServerLimit naming the resource and MaxMessageBytes", err)
			}
		}
		if n := sent.Load(); n > gigabyte/4 {
			t.Errorf("the server sent %d bytes before the driver stopped reading", n)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		cfg := childConfig(t, "huge-blob")
		d, err := NewToolDriver(testCtx(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		_, err = d.ReadResource(testCtx(t), "mem://huge")
		if err == nil || !strings.Contains(err.Error(), "mem://huge") {
			t.Fatalf("err = %v, want a refusal naming the resource", err)
		}
		if h := d.Healthcheck(testCtx(t)); h.Status != mcs.HealthError {
			t.Errorf("health = %+v, want ERROR: the session that carried the blob is ended", h)
		}
	})

	t.Run("in memory", func(t *testing.T) {
		// Over a Transport of the Config nothing bounds the decoding; the
		// driver keeps none of it.
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "blob", Version: "1"}, &mcpsdk.ServerOptions{Logger: discardLogger()})
		s.AddResource(&mcpsdk.Resource{URI: "mem://big", Name: "big"}, func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
			return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, Blob: make([]byte, 2<<20)}}}, nil
		})
		d, _ := connectInMemory(t, s, Config{MaxMessageBytes: 1 << 20})
		got, err := d.ReadResource(testCtx(t), "mem://big")
		if !errors.Is(err, ErrServerLimit) || got != nil || !strings.Contains(err.Error(), "2097152 bytes, more than 1048576") {
			t.Errorf("read = %d contents, %v; want nothing and ErrServerLimit with the sizes", len(got), err)
		}
	})
}

// hugeBlobServer is the stdio server of the "huge-blob" mode: its resource
// mem://huge is a blob of a gigabyte, written as it is sent and never held.
func hugeBlobServer() int {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "huge", Version: "1"}, nil)
	s.AddResource(&mcpsdk.Resource{URI: "mem://huge", Name: "huge"}, func(_ context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
		return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: req.Params.URI, Blob: []byte(hugeMarker)}}}, nil
	})
	tr := &mcpsdk.IOTransport{Reader: os.Stdin, Writer: &expander{w: os.Stdout}}
	if err := s.Run(context.Background(), tr); err != nil {
		return 1
	}
	return 0
}

// hugeMarker is the blob the expander replaces by a gigabyte of base64.
const hugeMarker = "HUGE"

// expander writes a gigabyte of base64 in place of the encoded hugeMarker.
type expander struct{ w io.WriteCloser }

func (e *expander) Write(p []byte) (int, error) {
	marker := []byte(`"blob":"SFVHRQ=="`)
	i := strings.Index(string(p), string(marker))
	if i < 0 {
		return e.w.Write(p)
	}
	if _, err := e.w.Write(p[:i+len(`"blob":"`)]); err != nil {
		return 0, err
	}
	chunk := []byte(strings.Repeat("A", 64<<10))
	for n := 0; n < 1<<30; n += len(chunk) {
		if _, err := e.w.Write(chunk); err != nil {
			return 0, err
		}
	}
	if _, err := e.w.Write(p[i+len(marker)-1:]); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (e *expander) Close() error { return e.w.Close() }

// A listing of 100,000 resources over 100 pages, or in one, is refused once it
// passes MaxResources, with an error that names the limit; so is the tool.
func TestAttackHugeResourceListing(t *testing.T) {
	for _, pageSize := range []int{1000, 100_000} {
		t.Run(fmt.Sprint("page size ", pageSize), func(t *testing.T) {
			s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "many", Version: "1"}, &mcpsdk.ServerOptions{PageSize: pageSize, Logger: discardLogger()})
			read := func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
				return &mcpsdk.ReadResourceResult{}, nil
			}
			for i := range 100_000 {
				s.AddResource(&mcpsdk.Resource{URI: fmt.Sprintf("mem://r/%06d", i), Name: "r"}, read)
			}
			d, _ := connectInMemory(t, s, Config{Resources: true})
			_, err := d.ListResources(testCtx(t))
			if !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), "more than 10000 resources") || !strings.Contains(err.Error(), "MaxResources") {
				t.Errorf("err = %v, want ErrServerLimit naming MaxResources", err)
			}
			_, err = d.ExecuteTool(testCtx(t), "resources__list", nil)
			if !errors.Is(err, ErrServerLimit) {
				t.Errorf("resources__list: err = %v, want ErrServerLimit", err)
			}
			d2, _ := connectInMemory(t, s, Config{MaxResources: 200_000})
			if all, err := d2.ListResources(testCtx(t)); err != nil || len(all) != 100_000 {
				t.Errorf("with MaxResources raised: %d resources, %v", len(all), err)
			}
		})
	}
}

// A template listing without end (a new cursor on every page, or one cursor
// again) stops with an error; a template of a megabyte is shown on one short
// line.
func TestAttackEndlessTemplates(t *testing.T) {
	t.Run("new cursor every page", func(t *testing.T) {
		var pages atomic.Int64
		url := rawRich(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
			if method != "resources/templates/list" {
				return false
			}
			n := pages.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resourceTemplates":[{"uriTemplate":"mem://{a}/{+b}{?c*}","name":"t%d"}],"nextCursor":"c%d"}}`, id, n, n)
			return true
		})
		d, err := NewToolDriver(testCtx(t), Config{URL: url, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		_, err = d.ListResourceTemplates(testCtx(t))
		if !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), "more than 1000 pages of resource templates") {
			t.Errorf("err = %v, want ErrServerLimit: more than 1000 pages", err)
		}
		if n := pages.Load(); n > maxPages {
			t.Errorf("the driver asked for %d pages", n)
		}
	})
	t.Run("cursor again", func(t *testing.T) {
		url := rawRich(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
			if method != "resources/templates/list" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resourceTemplates":[{"uriTemplate":"mem://{x}","name":"t"}],"nextCursor":"again"}}`, id)
			return true
		})
		d, err := NewToolDriver(testCtx(t), Config{URL: url, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		_, err = d.ListResourceTemplates(testCtx(t))
		if !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), `repeated the page cursor "again"`) {
			t.Errorf("err = %v, want the repeated cursor named", err)
		}
	})
	t.Run("a megabyte of template", func(t *testing.T) {
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "long", Version: "1"}, &mcpsdk.ServerOptions{Logger: discardLogger()})
		s.AddResourceTemplate(&mcpsdk.ResourceTemplate{URITemplate: "mem://" + strings.Repeat("{a}", 1<<18), Name: "long"},
			func(context.Context, *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
				return &mcpsdk.ReadResourceResult{}, nil
			})
		d, _ := connectInMemory(t, s, Config{Resources: true})
		got, err := d.ExecuteTool(testCtx(t), "resources__list", nil)
		if err != nil {
			t.Fatal(err)
		}
		if s := got.(string); len(s) > 1000 || !strings.Contains(s, "mem://{a}{a}") {
			t.Errorf("listing = %d bytes: %.300q; want the template on one short line", len(s), s)
		}
	})
}

// A prompt with a million arguments is refused while it is read; one with
// more arguments than MaxPromptArguments once decoded, and prompts__get is
// then left out while the server's tools stay.
func TestAttackPromptArguments(t *testing.T) {
	t.Run("a million over HTTP", func(t *testing.T) {
		var sent, listings atomic.Int64
		url := rawRich(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
			if method != "prompts/list" {
				return false
			}
			listings.Add(1)
			w.Header().Set("Content-Type", "application/json")
			bw := bufio.NewWriterSize(countingWriter{w, &sent}, 64<<10)
			fmt.Fprintf(bw, `{"jsonrpc":"2.0","id":%s,"result":{"prompts":[{"name":"p","arguments":[`, id)
			for i := range 1_000_000 {
				if i > 0 {
					_ = bw.WriteByte(',')
				}
				if _, err := fmt.Fprintf(bw, `{"name":"argument_%07d","description":"an argument that this prompt does not need at all"}`, i); err != nil {
					return true
				}
			}
			_, _ = bw.WriteString("]}]}}")
			_ = bw.Flush()
			return true
		})
		d, err := NewToolDriver(testCtx(t), Config{URL: url, Prompts: true, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		sent.Store(0)
		_, err = d.ListPrompts(testCtx(t))
		if !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), "MaxMessageBytes") {
			t.Errorf("err = %v, want ErrServerLimit naming MaxMessageBytes", err)
		}
		// The listing is 95 MB; the driver stops reading at 16 MiB.
		if n := sent.Load(); n >= 48_000_000 {
			t.Errorf("the server sent %d bytes: the whole listing was read", n)
		}
		// The tools stay usable, and listing them does not read the prompts
		// again.
		for range 3 {
			if got, err := d.ExecuteTool(testCtx(t), "t", nil); err != nil || got != "ok" {
				t.Errorf("t = %v, %v", got, err)
			}
			if _, err := d.ListTools(testCtx(t)); err != nil {
				t.Error(err)
			}
		}
		if n := listings.Load(); n != 2 {
			t.Errorf("prompts/list was asked %d times; want twice (the listing at the start, ListPrompts)", n)
		}
	})
	t.Run("over the argument cap", func(t *testing.T) {
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "args", Version: "1"}, &mcpsdk.ServerOptions{Logger: discardLogger()})
		s.AddTool(&mcpsdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
				return text("echo"), nil
			})
		p := &mcpsdk.Prompt{Name: "wide"}
		for i := range 5000 {
			p.Arguments = append(p.Arguments, &mcpsdk.PromptArgument{Name: fmt.Sprint("a", i)})
		}
		s.AddPrompt(p, func(context.Context, *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
			return &mcpsdk.GetPromptResult{}, nil
		})
		d, l := connectInMemory(t, s, Config{Prompts: true})
		if _, err := d.ListPrompts(testCtx(t)); !errors.Is(err, ErrServerLimit) || !strings.Contains(err.Error(), `the prompt "wide" declares 5000 arguments, more than 100`) {
			t.Errorf("err = %v", err)
		}
		tools, err := d.ListTools(testCtx(t))
		if err != nil || len(tools) != 1 || tools[0].Name != "echo" {
			t.Errorf("tools = %v, %v; want echo alone", tools, err)
		}
		if logs := strings.Join(l.all(), "\n"); !strings.Contains(logs, "prompts__get left out") {
			t.Errorf("logs = %s", logs)
		}
	})
}

// A server that declares resources but refuses resources/templates/list still
// has its resources listed by resources__list.
func TestResourcesListWithoutTemplates(t *testing.T) {
	url := rawRich(t, func(w http.ResponseWriter, method string, id json.RawMessage) bool {
		w.Header().Set("Content-Type", "application/json")
		switch method {
		case "resources/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resources":[{"uri":"mem://a","name":"a"}]}}`, id)
		case "resources/templates/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, id)
		default:
			w.Header().Del("Content-Type")
			return false
		}
		return true
	})
	d, err := NewToolDriver(testCtx(t), Config{URL: url, Resources: true, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	got, err := d.ExecuteTool(testCtx(t), "resources__list", nil)
	if err != nil || got != "Resources (1):\n- mem://a — a" {
		t.Errorf("resources__list = %q, %v", got, err)
	}
	if _, err := d.ListResourceTemplates(testCtx(t)); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "method not found") {
		t.Errorf("ListResourceTemplates: err = %v, want ErrRefused with the server's message", err)
	}
}

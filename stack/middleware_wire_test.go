package stack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
)

func filesStack(t *testing.T, extra string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, "[[driver]]\nlabel = \"files\"\ntype = \"filesystem\"\nroot = " + strconv.Quote(dir) + "\n" + extra
}

func TestValidateAndTracingKinds(t *testing.T) {
	dir, file := filesStack(t, "\n[middleware]\norder = [\"tracing\", \"validate\"]\n\n[middleware.validate]\ncoercion = true\nunknown = \"drop\"\n\n[middleware.tracing]\ncontent = true\n")
	s, err := Parse(filepath.Join(dir, "s.toml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	td := d.(mcs.ToolDriver)
	if _, err := td.ExecuteTool(context.Background(), "read_file", map[string]any{"path": "a.txt", "offset": "0", "x": 1}); err != nil {
		t.Fatalf("coerced and dropped: %v", err)
	}
	if _, err := td.ExecuteTool(context.Background(), "read_file", map[string]any{"path": "a.txt", "offset": "zero"}); err == nil || !strings.Contains(err.Error(), "/offset: want integer") {
		t.Fatalf("violation: %v", err)
	}
}

func TestValidateOnByDefault(t *testing.T) {
	tests := []struct {
		name, extra string
		want        []string
		checked     bool
	}{
		{"no middleware table", "", []string{"validate"}, true},
		{"tables, no order", "\n[middleware.hooks]\n[middleware.tracing]\n", []string{"tracing", "hooks", "validate"}, true},
		{"order without validate", "\n[middleware]\norder = [\"hooks\"]\n", []string{"hooks"}, false},
		{"empty order", "\n[middleware]\norder = []\n", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, file := filesStack(t, tc.extra)
			s, err := Parse(filepath.Join(dir, "s.toml"), []byte(file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, s.Middleware); diff != "" {
				t.Errorf("middleware (-want +got):\n%s", diff)
			}
			d, err := s.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = d.(mcs.ToolDriver).ExecuteTool(context.Background(), "read_file", map[string]any{"path": "a.txt", "lines": 3})
			if got := err != nil && strings.Contains(err.Error(), `/lines: unknown argument; "read_file" takes`); got != tc.checked {
				t.Errorf("undeclared argument: err = %v; checked by validate = %v, want %v", err, got, tc.checked)
			}
		})
	}
}

func TestMiddlewareKindErrors(t *testing.T) {
	tests := []struct{ kind, table, want string }{
		{"validate", "unknown = \"ignore\"\n", `key "unknown": "ignore" is not a policy; use "error", "drop" or "allow"`},
		{"validate", "coercion = \"yes\"\n", `key "coercion": must be true or false`},
		{"validate", "strict = true\n", `key "strict": unknown key`},
		{"tracing", "otlp_endpoint = \"localhost:4318\"\n", `key "otlp_endpoint": "localhost:4318" is not an http or https URL`},
		{"tracing", "otlp_metrics_endpoint = \"ftp://x/v1/metrics\"\n", `key "otlp_metrics_endpoint": "ftp://x/v1/metrics" is not an http or https URL`},
		{"tracing", "content_limit = 10\n", `key "content_limit": is 10; use a value from 64 to 1048576`},
	}
	for _, tc := range tests {
		t.Run(tc.kind+" "+tc.table, func(t *testing.T) {
			dir, file := filesStack(t, "\n[middleware]\norder = [\""+tc.kind+"\"]\n[middleware."+tc.kind+"]\n"+tc.table)
			_, err := Parse(filepath.Join(dir, "s.toml"), []byte(file))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "[middleware."+tc.kind+"]") {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// TestTracingExporter builds a stack whose tracing table names an OTLP/HTTP
// endpoint: the spans of its calls reach the collector when the stack closes.
func TestTracingExporter(t *testing.T) {
	var posts atomic.Int32
	var path atomic.Value
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.Path)
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	dir, file := filesStack(t, "\n[middleware.tracing]\notlp_endpoint = \""+collector.URL+"/v1/traces\"\nservice_name = \"stack-test\"\n")
	s, err := Parse(filepath.Join(dir, "s.toml"), []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.(mcs.ToolDriver).ExecuteTool(context.Background(), "read_file", map[string]any{"path": "a.txt"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if posts.Load() == 0 || path.Load() != "/v1/traces" {
		t.Errorf("collector got %d posts (last path %v); want the span flushed to /v1/traces at Close", posts.Load(), path.Load())
	}
}

func TestRESTCacheAndNameKeys(t *testing.T) {
	spec, _ := filepath.Abs("testdata/petstore.json")
	head := "[[driver]]\nlabel = \"pets\"\ntype = \"rest\"\nspec = " + strconv.Quote(spec) + "\n"
	s, err := Parse(filepath.Join("/srv", "s.toml"), []byte(head+"max_name_length = 20\ncache_dir = \"cache\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Drivers[0].Config.(*restDriver).cfg
	if cfg.MaxNameLength != 20 || cfg.CacheDir != filepath.Join("/srv", "cache") || cfg.NoCache {
		t.Errorf("config: MaxNameLength %d, CacheDir %q, NoCache %v", cfg.MaxNameLength, cfg.CacheDir, cfg.NoCache)
	}
	s, err = Parse("s.toml", []byte(head+"no_cache = true\nmax_name_length = 16\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tools, err := d.(mcs.ToolDriver).ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if len(tool.Name) > 16 {
			t.Errorf("tool %q is longer than max_name_length = 16", tool.Name)
		}
	}
	for body, want := range map[string]string{
		"max_name_length = 8\n":                `key "max_name_length": is 8; use a value from 16 to 64`,
		"no_cache = true\ncache_dir = \"c\"\n": `key "cache_dir": no_cache = true turns the cache off`,
		"no_cache = \"yes\"\n":                 `key "no_cache": must be true or false`,
	} {
		if _, err := Parse("s.toml", []byte(head+body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", body, err, want)
		}
	}
}

package stack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/orchestrator"
)

// problems returns the messages of the *Errors in err.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var out []string
	var walk func(error)
	walk = func(err error) {
		if e, ok := err.(*Error); ok {
			out = append(out, e.Error())
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		t.Errorf("error %T is not an *Error: %v", err, err)
	}
	walk(err)
	return out
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
	}{
		{
			name: "no driver",
			file: "[middleware]\norder = []\n",
			want: []string{"s.toml: declares no driver; add a [[driver]] table with a label and a type (" + typeList() + ")"},
		},
		{
			name: "syntax",
			file: "[[driver]]\nlabel = \"a\"\ntype = rest\n",
			want: []string{"s.toml:3: not valid TOML: "},
		},
		{
			name: "unknown key, wrong type, bad label",
			file: `[[driver]]
label = "pets"
type = "rest"
spec = "p.json"
include_tags = "pet"
timeout = 30
spek = 1

[[driver]]
label = "no good"
type = "filesystem"
`,
			want: []string{
				`s.toml:6: [[driver]] "pets", key "timeout": must be a string, such as timeout = "..." (got an integer)`,
				`s.toml:7: [[driver]] "pets", key "spek": unknown key; did you mean "spec"? the keys here are auth_scheme, base_url, cache_dir, credentials, headers, include_paths, include_tags, label, max_name_length, max_response_bytes, no_cache, oauth, scopes, spec, timeout, type`,
				`s.toml:9: [[driver]] "no good": has no root; add root = "./data" (the directory the tools may use)`,
				`s.toml:10: [[driver]] "no good", key "label": "no good" is not a valid label; use letters, digits and '-', at most 32`,
			},
		},
		{
			name: "missing label and type, duplicate label",
			file: `[[driver]]
type = "csv"
root = "."
[[driver]]
label = "x"
[[driver]]
label = "y"
type = "csv"
root = "."
[[driver]]
label = "y"
type = "csv"
root = "."
`,
			want: []string{
				`s.toml:1: [[driver]] #1: has no label; add label = "name" (letters, digits and '-', at most 32)`,
				`s.toml:4: [[driver]] "x": has no type; add type = "..." (` + typeList() + `)`,
				`s.toml:11: [[driver]] "y", key "label": "y" is already used by driver #3; give each driver its own label`,
			},
		},
		{
			name: "unknown type",
			file: "[[driver]]\nlabel = \"a\"\ntype = \"soap-over-xml\"\nwsdl = \"x\"\n",
			want: []string{`s.toml:3: [[driver]] "a", key "type": unknown driver type "soap-over-xml"; use one of ` + fmt.Sprint(names(DriverTypes(), func(d DriverType) string { return d.Name }))},
		},
		{
			name: "middleware and orchestrator",
			file: `[[driver]]
label = "a"
type = "csv"
root = "."

[orchestrator]
strategy = ["namespacing", "magic"]
page_sise = 3

[middleware]
order = ["hooks", "hooks", "retry"]
[middleware.hooks]
audit_log = 5
[middleware.permission]
allow = ["[a"]
`,
			want: []string{
				`s.toml:7: [orchestrator], key "strategy": unknown layer "magic"; use one of [always_namespacing detail_loading namespacing pagination reject_conflicts switching tool_search flat]`,
				`s.toml:8: [orchestrator], key "page_sise": unknown key; did you mean "page_size"? the keys here are max_description, max_results, page_size, strategy`,
				`s.toml:11: [middleware], key "order": "hooks" is listed twice; list each middleware once`,
				`s.toml:11: [middleware], key "order": unknown middleware "retry"; use one of ` + fmt.Sprint(names(MiddlewareKinds(), func(k MiddlewareKind) string { return k.Name })),
				`s.toml:13: [middleware.hooks], key "audit_log": must be a string, such as audit_log = "..." (got an integer)`,
				`s.toml:14: [middleware], key "permission": is configured but not in order; add "permission" to [middleware] order or remove the table`,
			},
		},
		{
			name: "bad permission pattern",
			file: "[[driver]]\nlabel = \"a\"\ntype = \"csv\"\nroot = \".\"\n[middleware.permission]\ndeny = [\"[z\"]\n",
			want: []string{`s.toml:6: [middleware.permission], key "deny": pattern "[z" is malformed; use * ? and [...] as in a file glob`},
		},
		{
			name: "bad credentials",
			file: "[[driver]]\nlabel = \"a\"\ntype = \"rest\"\nspec = \"x.json\"\ncredentials = \"keychain\"\n",
			want: []string{`s.toml:5: [[driver]] "a", key "credentials": "keychain" is not a credential source; use "env" (tokens from the environment, MCS_TOKEN_A), "oauth" (sign in in the browser, the [driver.oauth] table), "device" (the OAuth device flow of a [driver.oauth] table) or "none"`},
		},
		{
			name: "unknown top-level key",
			file: "[[driver]]\nlabel = \"a\"\ntype = \"csv\"\nroot = \".\"\n[servers]\nx = 1\n",
			want: []string{`s.toml:5: key "servers": unknown key; the keys here are approvals, auth, driver, middleware, orchestrator`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.toml", []byte(tc.file))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			got := problems(t, err)
			if tc.name == "syntax" && len(got) == 1 {
				// go-toml's own words may change between versions.
				got[0] = got[0][:min(len(got[0]), len(tc.want[0]))]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretsRefused(t *testing.T) {
	tests := []struct {
		name, line string
		refused    bool
	}{
		{"github token", `spec = "ghp_0123456789abcdefghijABCDEFGHIJ012345"`, true},
		{"bearer header", `headers = {X-Auth = "Bearer abcdefgh12345678"}`, true},
		{"authorization key", `headers = {Authorization = "x"}`, true},
		{"api key name", `headers = {X-Api-Key = "anything"}`, true},
		{"jwt", `base_url = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"`, true},
		{"password in URL", `spec = "https://user:hunter2@api.example.com/openapi.json"`, true},
		{"random string", `include_tags = ["Zx8Kq2LmP9vR4tY7wB3nC6hJ1dF5gS0aQ"]`, true},
		{"aws key", `include_tags = ["AKIAIOSFODNN7EXAMPLE1234"]`, true},
		{"token in URL query", `spec = "https://api.example.com/openapi.json?access_token=abc123"`, true},
		{"plain query", `spec = "https://api.example.com/openapi.json?version=3"`, false},
		{"plain URL", `spec = "https://api.github.com/openapi/v3/api.github.com.json"`, false},
		{"long path", `spec = "./specs/very-long-directory-name/api-description-2026-11.json"`, false},
		{"long tag", `include_tags = ["repositoryManagementAndAdministration"]`, false},
		{"user without password", `spec = "https://user@api.example.com/openapi.json"`, false},
		{"credentials env", `credentials = "env"`, false},
		{"token URL", `headers = {token_url = "https://example.com/token"}`, false},
		{"token in a token URL", `headers = {token_url = "https://example.com/token?access_token=abcdef123"}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := "[[driver]]\nlabel = \"a\"\ntype = \"rest\"\n" + tc.line + "\n"
			if !strings.HasPrefix(tc.line, "spec") {
				file += "spec = \"p.json\"\n"
			}
			_, err := Parse("s.toml", []byte(file))
			refused := err != nil && strings.Contains(err.Error(), "secrets never go in the stack file")
			if refused != tc.refused {
				t.Fatalf("refused %v, want %v (err: %v)", refused, tc.refused, err)
			}
			if refused {
				msg := problems(t, err)[0]
				if !strings.HasPrefix(msg, "s.toml:4: ") || !strings.Contains(msg, `credentials = "env"`) || !strings.Contains(msg, "MCS_TOKEN_A ") {
					t.Errorf("message does not say where and what to do: %s", msg)
				}
				for _, secret := range []string{"ghp_0123", "hunter2", "abcdefgh12345678", "Zx8Kq2"} {
					if strings.Contains(msg, secret) {
						t.Errorf("message shows the secret: %s", msg)
					}
				}
			}
		})
	}
}

// writeFixture writes a stack directory: an OpenAPI document, a data directory
// with a CSV file, and the stack file with content.
func writeFixture(t testing.TB, content string) string {
	t.Helper()
	dir := t.TempDir()
	spec, err := os.ReadFile("testdata/petstore.json")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "petstore.json"), spec, 0o600))
	must(os.Mkdir(filepath.Join(dir, "data"), 0o700))
	must(os.WriteFile(filepath.Join(dir, "data", "a.csv"), []byte("x,y\n1,2\n3,4\n"), 0o600))
	path := filepath.Join(dir, "mcs.toml")
	must(os.WriteFile(path, []byte(content), 0o600))
	return path
}

func toolNames(t *testing.T, d mcs.Driver) []string {
	t.Helper()
	tools, err := d.(mcs.ToolDriver).ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestBuildSingleDriver(t *testing.T) {
	path := writeFixture(t, `[[driver]]
label = "pets"
type = "rest"
spec = "petstore.json"   # relative to the stack file
include_tags = ["pet"]
credentials = "env"
auth_scheme = "bearer"   # the document declares no security scheme
`)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := d.(*rest.Driver); !ok {
		t.Fatalf("one driver without [orchestrator] built a %T, want *rest.Driver", d)
	}
	if diff := cmp.Diff([]string{"findPets", "addPet"}, toolNames(t, d)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if _, err := d.(mcs.SupportsNativeTools).NativeToolContext(context.Background(), "any-model"); err != nil {
		t.Error(err)
	}
}

func TestBuildOrchestrated(t *testing.T) {
	path := writeFixture(t, `[[driver]]
label = "pets"
type = "rest"
spec = "petstore.json"

[[driver]]
label = "files"
type = "filesystem"
root = "data"
read_only = true

[[driver]]
label = "tables"
type = "csv"
root = "data"

[orchestrator]
strategy = ["namespacing", "reject_conflicts"]

[middleware]
order = ["hooks", "permission", "auth"]
[middleware.hooks]
audit_log = "audit.jsonl"
[middleware.permission]
allow = ["files__*", "tables__*"]
deny = ["*add*"]
`)
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"hooks", "permission", "auth"}, s.Middleware); diff != "" {
		t.Errorf("middleware (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := d.(*orchestrator.Orchestrator)
	if !ok {
		t.Fatalf("built a %T, want *orchestrator.Orchestrator", d)
	}
	if diff := cmp.Diff([]string{"pets", "files", "tables"}, o.Labels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	res, err := o.ExecuteTool(ctx, "tables__read_csv_head", map[string]any{"path": "a.csv"})
	if err != nil {
		t.Fatalf("allowed call: %v", err)
	}
	if m, _ := res.(map[string]any); m["returned"] != 2 {
		t.Errorf("read_csv_head: %v", res)
	}
	res, err = o.ExecuteTool(ctx, "pets__addPet", map[string]any{"name": "Rex"})
	if err != nil || mcs.CodeOf(res, err) != mcs.CodeDenied {
		t.Errorf("denied call: %v, %v", res, err)
	}
	// Not allowed, not denied, ask is off: fails closed.
	if _, err := o.ExecuteTool(ctx, "pets__findPets", nil); err == nil || !strings.Contains(err.Error(), "no rule matched") {
		t.Errorf("unruled call: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	audit, err := os.ReadFile(filepath.Join(filepath.Dir(path), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(audit), "\n"); n != 3 {
		t.Errorf("audit file has %d lines, want 3:\n%s", n, audit)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestBuildAsk(t *testing.T) {
	path := writeFixture(t, "[[driver]]\nlabel = \"t\"\ntype = \"csv\"\nroot = \"data\"\n[middleware.permission]\nask = true\n")
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "Host.Consent is nil") {
		t.Fatalf("Build without a way to ask: %v", err)
	}
	var asked []string
	s.Host.Consent = func(_ context.Context, name string, _ map[string]any) (bool, error) {
		asked = append(asked, name)
		return name == "list_csv_files", nil
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	td := d.(mcs.ToolDriver)
	if _, err := td.ExecuteTool(context.Background(), "list_csv_files", nil); err != nil {
		t.Error(err)
	}
	res, _ := td.ExecuteTool(context.Background(), "describe_csv", map[string]any{"path": "a.csv"})
	if mcs.CodeOf(res, nil) != mcs.CodeDenied {
		t.Errorf("denied by the user: %v", res)
	}
	if diff := cmp.Diff([]string{"list_csv_files", "describe_csv"}, asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
}

// closeProbe is a middleware kind of the tests that records its closing.
type closeProbe struct{ closed *int }

func (c closeProbe) Middleware(_ context.Context, b *Builder) (mcs.ToolMiddleware, error) {
	b.OnClose(func() error { *c.closed++; return nil })
	return mcs.ToolMiddlewareFunc(func(ctx context.Context, name string, args map[string]any, next mcs.CallNext) (any, error) {
		return next(ctx, name, args)
	}), nil
}

var probeClosed int

func init() {
	RegisterMiddlewareKind(MiddlewareKind{Name: "test-probe", Rank: 99, Decode: func(t *Table) MiddlewareConfig {
		t.Bool("enabled")
		return closeProbe{&probeClosed}
	}})
}

// TestBuildFailureCloses checks that a failed Build closes what it opened.
func TestBuildFailureCloses(t *testing.T) {
	probeClosed = 0
	path := writeFixture(t, "[[driver]]\nlabel = \"t\"\ntype = \"csv\"\nroot = \"missing\"\n[middleware]\norder = [\"test-probe\"]\n")
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Build(context.Background())
	if err == nil || !strings.Contains(err.Error(), `driver "t" (line 1)`) {
		t.Fatalf("Build over a missing root: %v", err)
	}
	if probeClosed != 1 {
		t.Errorf("the middleware's resource was closed %d times, want 1", probeClosed)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none.toml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.toml")
	if err := os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}
}

func TestPositions(t *testing.T) {
	data := []byte(`top = 1
[[driver]]
label = "a"
headers = {X-One = "1",
  X-Two = "2"}
[driver.nested]
deep = true
[[driver]]
label = "b"
[middleware.hooks]
audit_log = "-"
`)
	pos := indexPositions(data)
	for path, want := range map[string]int{
		"top": 1, "driver[0]": 2, "driver[0].label": 3, "driver[0].headers.X-Two": 5,
		"driver[0].nested.deep": 7, "driver[1].label": 9, "middleware.hooks": 10,
		"middleware.hooks.audit_log": 11, "driver[1].missing": 8,
	} {
		if got := pos.line(path); got != want {
			t.Errorf("line(%q) = %d, want %d", path, got, want)
		}
	}
}

// TestPositionsLarge: in a stack of thousands of drivers every key is placed
// on its own line, the last ones included; and an error deep in the file names
// that line.
func TestPositionsLarge(t *testing.T) {
	const n = 2000
	data := largeStack(n)
	pos := indexPositions(data)
	lines := strings.Split(string(data), "\n")
	for _, i := range []int{0, 1, n / 2, n - 1} {
		for _, key := range []string{"label", "timeout", "headers.Accept"} {
			path := fmt.Sprintf("driver[%d].%s", i, key)
			l := pos.line(path)
			first, _, _ := strings.Cut(key, ".")
			if l < 1 || l > len(lines) || !strings.HasPrefix(lines[l-1], first+" =") {
				t.Fatalf("line(%q) = %d", path, l)
			}
		}
		if l := pos.line(fmt.Sprintf("driver[%d].label", i)); !strings.Contains(lines[l-1], fmt.Sprintf(`"api%d"`, i)) {
			t.Errorf("driver %d: label placed on line %d: %q", i, l, lines[l-1])
		}
	}
	bad := strings.Replace(string(data), `label = "api1999"`, `label = "api1999"`+"\nspek = 1", 1)
	_, err := Parse("big.toml", []byte(bad))
	want := fmt.Sprintf("big.toml:%d: [[driver]] \"api1999\", key \"spek\"", pos.line("driver[1999].label")+1)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to start %q", err, want)
	}
}

func TestRegistry(t *testing.T) {
	var got []string
	for _, k := range MiddlewareKinds() {
		got = append(got, k.Name)
	}
	if diff := cmp.Diff([]string{"tracing", "hooks", "validate", "permission", "auth", "test-probe"}, got); diff != "" {
		t.Errorf("middleware kinds in recommended order (-want +got):\n%s", diff)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a taken name did not panic")
		}
	}()
	RegisterDriverType(DriverType{Name: "rest", Decode: decodeREST})
}

// TestBuildReadOnly runs the tools the drivers annotate read-only without
// asking (REST by HTTP method, the filesystem driver per tool, every CSV tool)
// and asks for every other call, behind an orchestrator and on a single driver.
func TestBuildReadOnly(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[]`))
	}))
	defer api.Close()
	for _, tc := range []struct {
		name, file string
		calls      map[string]map[string]any
		asked      []string
	}{
		{
			name: "orchestrated",
			file: `[[driver]]
label = "pets"
type = "rest"
spec = "petstore.json"
base_url = "` + api.URL + `"

[[driver]]
label = "files"
type = "filesystem"
root = "data"

[[driver]]
label = "tables"
type = "csv"
root = "data"

[middleware.permission]
read_only = true
ask = true
`,
			calls: map[string]map[string]any{
				"pets__findPets":         nil,
				"pets__addPet":           {"name": "Rex"},
				"files__read_file":       {"path": "a.csv"},
				"files__write_file":      {"path": "b.txt", "content": "x"},
				"files__delete_file":     {"path": "a.csv"},
				"tables__read_csv_head":  {"path": "a.csv"},
				"tables__list_csv_files": nil,
			},
			asked: []string{"files__delete_file", "files__write_file", "pets__addPet"},
		},
		{
			name:  "single",
			file:  "[[driver]]\nlabel = \"files\"\ntype = \"filesystem\"\nroot = \"data\"\n[middleware.permission]\nread_only = true\nask = true\n",
			calls: map[string]map[string]any{"list_directory": {"path": "."}, "make_directory": {"path": "new"}},
			asked: []string{"make_directory"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(writeFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var asked []string
			s.Host.Consent = func(_ context.Context, name string, _ map[string]any) (bool, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, name)
				return false, nil
			}
			ctx := context.Background()
			d, err := s.Build(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for name, args := range tc.calls {
				res, err := d.(mcs.ToolDriver).ExecuteTool(ctx, name, args)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				denied := mcs.CodeOf(res, nil) == mcs.CodeDenied
				if want := slices.Contains(tc.asked, name); denied != want {
					t.Errorf("%s: denied %v, want %v (result %v)", name, denied, want, res)
				}
			}
			slices.Sort(asked)
			if diff := cmp.Diff(tc.asked, asked); diff != "" {
				t.Errorf("asked (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLayers(t *testing.T) {
	pets := "[[driver]]\nlabel = \"pets\"\ntype = \"rest\"\nspec = \"petstore.json\"\n"
	tables := "[[driver]]\nlabel = \"tables\"\ntype = \"csv\"\nroot = \"data\"\n"
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"namespacing, one driver", tables + "[orchestrator]\nstrategy = [\"namespacing\"]\n",
			[]string{"list_csv_files", "describe_csv", "read_csv_head", "filter_csv_rows", "summarize_numeric_column"}},
		{"always_namespacing, one driver", tables + "[orchestrator]\nstrategy = [\"always_namespacing\"]\n",
			[]string{"tables__list_csv_files", "tables__describe_csv", "tables__read_csv_head", "tables__filter_csv_rows", "tables__summarize_numeric_column"}},
		{"tool_search", pets + tables + "[orchestrator]\nstrategy = [\"namespacing\", \"tool_search\"]\nmax_results = 2\n",
			[]string{orchestrator.SearchTool}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(writeFixture(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			d, err := s.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if diff := cmp.Diff(tc.want, toolNames(t, d)); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}

	// tool_search returns at most max_results tools, and those become callable.
	s, err := Load(writeFixture(t, pets+tables+"[orchestrator]\nstrategy = [\"namespacing\", \"tool_search\"]\nmax_results = 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := s.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := d.(mcs.ToolDriver).ExecuteTool(ctx, orchestrator.SearchTool, map[string]any{"query": "csv file"})
	if err != nil {
		t.Fatal(err)
	}
	found, ok := res.(*orchestrator.SearchResult)
	if !ok || len(found.Tools) == 0 || len(found.Tools) > 2 {
		t.Fatalf("search result %#v, want 1 or 2 tools", res)
	}
	if names := toolNames(t, d); !slices.Contains(names, found.Tools[0].Name) {
		t.Errorf("found tool %s is not listed after the search: %v", found.Tools[0].Name, names)
	}
}

func TestLayerErrors(t *testing.T) {
	base := "[[driver]]\nlabel = \"t\"\ntype = \"csv\"\nroot = \".\"\n[orchestrator]\n"
	for _, tc := range []struct{ name, lines, want string }{
		{"both namespacings", `strategy = ["namespacing", "always_namespacing"]`,
			`s.toml:6: [orchestrator], key "strategy": "namespacing" and "always_namespacing" would prefix every name twice; keep one of them`},
		{"max_results", "strategy = [\"tool_search\"]\nmax_results = 0",
			`s.toml:7: [orchestrator], key "max_results": is 0; use a value from 1 to 100`},
		{"max_results type", "strategy = [\"tool_search\"]\nmax_results = \"5\"",
			`s.toml:7: [orchestrator], key "max_results": must be an integer (got a string)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.toml", []byte(base+tc.lines+"\n"))
			if diff := cmp.Diff([]string{tc.want}, problems(t, err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAttackNamespacingLosesOperationID: under the label "github" an
// operationId of 62 characters makes a namespaced name over 64, which the
// orchestrator would shorten to a hash, leaving the tool only its summary
// ("[github] Operation number 0"). The stack has the REST driver shorten its
// names within the budget the label leaves, so the description keeps the full
// operationId.
func TestAttackNamespacingLosesOperationID(t *testing.T) {
	const opID = "enterprise-admin/list-self-hosted-runner-groups-for-enterprise"
	spec := `{"openapi":"3.0.3","info":{"title":"GitHub","version":"1"},"servers":[{"url":"https://api.example.com"}],
"paths":{"/enterprises/{enterprise}/actions/runner-groups":{"get":{"operationId":"` + opID + `","summary":"Operation number 0",
"parameters":[{"name":"enterprise","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}}}}`
	for name, strategy := range map[string]string{"default": "", "always": "[orchestrator]\nstrategy = [\"always_namespacing\"]\n"} {
		t.Run(name, func(t *testing.T) {
			file := "[[driver]]\nlabel = \"github\"\ntype = \"rest\"\nspec = \"github.json\"\nno_cache = true\n"
			if strategy == "" {
				file += "\n[[driver]]\nlabel = \"tables\"\ntype = \"csv\"\nroot = \"data\"\n"
			} else {
				file += strategy
			}
			path := writeFixture(t, file)
			if err := os.WriteFile(filepath.Join(filepath.Dir(path), "github.json"), []byte(spec), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Load(path)
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
			found := false
			for _, tool := range tools {
				if !strings.HasPrefix(tool.Name, "github__enterprise-admin") {
					continue
				}
				found = true
				if len(tool.Name) > 64 {
					t.Errorf("name %q is longer than 64", tool.Name)
				}
				if !strings.Contains(tool.Summary(), opID) {
					t.Errorf("tool %q: the description %q lost the operationId %q", tool.Name, tool.Summary(), opID)
				}
			}
			if !found {
				t.Fatalf("no github__enterprise-admin tool in %v", tools)
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs/cmd/mcs/internal/demo"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// result is what one run of mcs printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// mcsRun runs mcs in-process with args, stdin as input, in the current
// directory.
func mcsRun(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

var (
	portPattern = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	tempPattern = regexp.MustCompile(`/[^\s"]*mcs-demo-\d+`)
)

// scrub replaces what changes from run to run (loopback ports, temporary
// directories).
func scrub(s string) string {
	s = portPattern.ReplaceAllString(s, "127.0.0.1:PORT")
	return tempPattern.ReplaceAllString(s, "DEMO-DIR")
}

// testdata is the absolute path of testdata/, so that tests that change the
// current directory find their golden files.
var testdata, _ = filepath.Abs("testdata")

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdata, name+".golden")
	got = scrub(got)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file: %v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from %s (-want +got):\n%s", name, path, diff)
	}
}

// TestDemoCommands runs every command against the embedded demo (no stack file
// in the current directory) and compares stdout with its golden file.
func TestDemoCommands(t *testing.T) {
	t.Setenv("MCS_TOKEN_PETS", "")
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr []string // substrings of stderr
		absent []string // substrings stderr must not have
	}{
		{name: "tools", args: []string{"tools"}, stderr: []string{"using the embedded demo"}},
		{name: "tools-json", args: []string{"tools", "--json"}},
		{name: "tools-budget", args: []string{"tools", "--budget"}},
		{name: "tools-budget-json", args: []string{"tools", "--budget", "--json", "--model", "gpt-4o"}},
		{name: "usage-model-without-budget", args: []string{"tools", "--model", "gpt-4o"}, code: 2, stderr: []string{"--model applies to --budget"}},
		{name: "describe", args: []string{"describe", "pets__findPetsByStatus"}},
		{name: "prompt", args: []string{"prompt"}},
		{name: "prompt-native", args: []string{"prompt", "--native", "--model", "gpt-4o"}},
		{name: "call", args: []string{"call", "pets__findPetsByStatus", "status=available", "limit=2"},
			stderr: []string{"tool=pets__findPetsByStatus", "outcome=ok"}, absent: []string{"Allow it?"}},
		{name: "call-args-json", args: []string{"call", "shelter__read_csv_head", "--args", `{"path": "shelters.csv"}`}, absent: []string{"Allow it?"}},
		{name: "call-denied", stdin: "n\n", args: []string{"call", "pets__addPet", "name=Rex"}, code: 1,
			stderr: []string{`Tool "pets__addPet" (driver "pets", via the orchestrator) wants to run`, "outcome=denied", "mcs: pets__addPet was denied"}},
		{name: "call-no-key", stdin: "y\n", args: []string{"call", "pets__deletePet", "petId=1"}, code: 1,
			stderr: []string{"MCS_TOKEN_PETS"}},
		{name: "call-input-ended", args: []string{"call", "pets__addPet", "name=Rex"}, code: 1,
			stderr: []string{"pets__addPet was not run"}},
		{name: "call-unknown-tool", args: []string{"call", "pets__find"}, code: 2,
			stderr: []string{`mcs: no tool is called "pets__find"; did you mean pets__findPetsByStatus?`}},
		{name: "call-bad-value", args: []string{"call", "pets__findPetsByStatus", "limit=many"}, code: 1,
			stderr: []string{`parameter limit wants an integer, not "many"`}},
		{name: "call-unknown-param", args: []string{"call", "pets__getPetById", "id=1"}, code: 1,
			stderr: []string{`has no parameter "id"; its parameters are petId`}},
		{name: "call-not-pair", args: []string{"call", "pets__getPetById", "petId"}, code: 1,
			stderr: []string{`argument "petId" is not key=value`}},
		{name: "call-args-cut", args: []string{"call", "pets__getPetById", "--args", `{"petId": 1, "x": "a`}, code: 1,
			stderr: []string{"--args is cut short: the JSON ends at byte 20"}},
		{name: "call-args-syntax", args: []string{"call", "pets__getPetById", "--args", `{"petId": 1,, }`}, code: 1,
			stderr: []string{"--args is not valid JSON at byte 13 of 15: invalid character ','"}},
		{name: "call-args-array", args: []string{"call", "pets__getPetById", "--args", `[1]`}, code: 1,
			stderr: []string{"--args is a JSON array, not an object"}},
		{name: "call-args-trailing", args: []string{"call", "pets__getPetById", "--args", `{"petId": 1} {}`}, code: 1,
			stderr: []string{"--args has more after the object, from byte 12"}},
		{name: "call-failed", args: []string{"call", "pets__getPetById", "petId=99"}, code: 1,
			stderr: []string{"mcs: pets__getPetById failed: 404 Not Found"}},
		{name: "process-text", stdin: "Let me look.\n{\"tool\": \"pets__getPetById\", \"arguments\": {\"petId\": 2}}\n",
			args: []string{"process"}},
		{name: "process-native", stdin: `{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "pets__getInventory", "arguments": "{}"}}]}`,
			args: []string{"process", "-"}},
		{name: "process-failed", stdin: `{"tool": "pets__getPetById", "arguments": {"petId": 99}}`, args: []string{"process"}, code: 1},
		{name: "process-no-call", stdin: "Nothing to do here.", args: []string{"process"}},
		{name: "process-unowned", stdin: `{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "pets__getInventory", "arguments": "{}"}}, {"id": "call_2", "type": "function", "function": {"name": "pets__sellPet", "arguments": "{\"petId\": 1}"}}]}`,
			args: []string{"process"}, code: 1,
			stderr: []string{`mcs: the reply calls "pets__sellPet", which is no tool of the stack: it did not run`, "1 call(s) of the reply name no tool"}},
		{name: "inspect", stdin: "help\nlist\nshow pet\n2\n5\nrun find\nsold\n\nrun 9\nadoptions.csv\nspecies\n<<\ndog\n.\n\n\nrun addPet\nLuna\n\npending\nn\nshow nothing\nquit\n",
			args: []string{"inspect"}, stderr: []string{"outcome=denied"}},
		{name: "inspect-eof", stdin: "list", args: []string{"inspect"}},
		{name: "health", args: []string{"health"}},
		{name: "usage-extra-arg", args: []string{"tools", "extra"}, code: 2, stderr: []string{"usage: mcs tools"}},
		{name: "usage-unknown-flag", args: []string{"tools", "--bogus"}, code: 2, stderr: []string{"unknown flag: --bogus"}},
		{name: "usage-unknown-command", args: []string{"bogus"}, code: 2, stderr: []string{`unknown command "bogus"`}},
		{name: "usage-base-url", args: []string{"--base-url", "http://x", "tools"}, code: 2, stderr: []string{"--base-url applies to --openapi"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mcsRun(t, tc.stdin, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(r.stderr, s) {
					t.Errorf("stderr has %q:\n%s", s, r.stderr)
				}
			}
			golden(t, tc.name, r.stdout)
		})
	}
}

// TestCallWithKey runs a write of the demo with the API key in the environment
// and the permission question answered yes on stdin.
func TestCallWithKey(t *testing.T) {
	t.Setenv("MCS_TOKEN_PETS", demo.APIKey)
	r := mcsRun(t, "y\n", "call", "pets__addPet", "name=Luna", "species=cat")
	if r.code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", r.code, r.stderr)
	}
	golden(t, "call-with-key", r.stdout)
	if strings.Contains(r.stderr, demo.APIKey) {
		t.Errorf("stderr shows the API key:\n%s", r.stderr)
	}
}

// TestHelp checks that every command has an example in its help.
func TestHelp(t *testing.T) {
	a := &app{terminal: func(any) bool { return false }}
	root := a.root()
	for _, c := range append(root.Commands(), root) {
		if c.Name() == "help" {
			continue
		}
		if c.Example == "" {
			t.Errorf("command %q has no example", c.Name())
		}
		r := mcsRun(t, "", strings.Fields(strings.TrimPrefix(c.CommandPath(), "mcs")+" --help")...)
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%s --help: exit %d, stdout:\n%s", c.CommandPath(), r.code, r.stdout)
		}
	}
}

func TestVersionAndCompletion(t *testing.T) {
	r := mcsRun(t, "", "version")
	if r.code != 0 || !regexp.MustCompile(`^mcs 0\.1\.0 .*go1\.\d+`).MatchString(r.stdout) {
		t.Errorf("version: exit %d, %q", r.code, r.stdout)
	}
	r = mcsRun(t, "", "completion", "bash")
	if r.code != 0 || !strings.Contains(r.stdout, "bash completion") {
		t.Errorf("completion bash: exit %d, %.200q", r.code, r.stdout)
	}
}

// writeStack writes a stack file into a new directory, makes it the current
// directory and returns it.
func writeStack(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcs.toml"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	return dir
}

// serveStore serves the demo store on an httptest server.
func serveStore(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(demo.NewStore().Handler())
	t.Cleanup(srv.Close)
	return srv
}

// TestStackFile runs commands over stack files in temporary directories,
// against an httptest server.
func TestStackFile(t *testing.T) {
	srv := serveStore(t)
	tests := []struct {
		name   string
		file   string
		stdin  string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{
			name: "single rest driver, no prefix",
			file: `[[driver]]
label = "pets"
type = "rest"
spec = "` + srv.URL + `/openapi.json"
include_tags = ["store"]
`,
			args:   []string{"tools"},
			stdout: []string{"1  getInventory"},
		},
		{
			name: "files and permission policy",
			file: `[[driver]]
label = "files"
type = "filesystem"
root = "."
read_only = true

[[driver]]
label = "pets"
type = "rest"
spec = "` + srv.URL + `/openapi.json"

[middleware]
order = ["hooks", "permission"]
[middleware.hooks]
audit_log = "audit.jsonl"
[middleware.permission]
allow = ["files__*"]
deny = ["*delete*"]
`,
			args:   []string{"call", "pets__deletePet", "petId=1"},
			code:   1,
			stdout: []string{"was denied by policy"},
		},
		{
			name: "broken stack file",
			file: `[[driver]]
label = "pets"
type = "rest"
spec = "x.json"
incude_tags = ["pet"]
`,
			args:   []string{"tools"},
			code:   2,
			stderr: []string{`mcs: mcs.toml:5: [[driver]] "pets", key "incude_tags": unknown key`},
		},
		{
			name: "invalid TOML",
			file: "[[driver]\nlabel = 1\n",
			args: []string{"tools"}, code: 2,
			stderr: []string{"mcs: mcs.toml:1: not valid TOML"},
		},
		{
			name: "literal token",
			file: `[[driver]]
label = "gh"
type = "rest"
spec = "github.json"
headers = {Authorization = "Bearer ghp_0123456789abcdefghijklmnopqrstuvwxyz"}
`,
			args: []string{"tools"}, code: 2,
			stderr: []string{`mcs.toml:5: [[driver]] "gh", key "headers.Authorization"`, "MCS_TOKEN_"},
		},
		{
			name: "unreachable API",
			file: `[[driver]]
label = "pets"
type = "rest"
spec = "http://127.0.0.1:1/openapi.json"
`,
			args: []string{"health"}, code: 2,
			stdout: []string{"ERROR: unreachable"},
		},
		{
			name: "health warning",
			file: `[[driver]]
label = "pets"
type = "rest"
spec = "` + srv.URL + `/missing.json"
`,
			args: []string{"health"}, code: 1,
			stdout: []string{"WARNING: GET " + srv.URL + "/missing.json: 404"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			writeStack(t, tc.file)
			r := mcsRun(t, tc.stdin, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
		})
	}
}

// TestAuditFile checks that a call through a stack file is recorded in its audit
// file, relative to the stack file.
func TestAuditFile(t *testing.T) {
	srv := serveStore(t)
	dir := writeStack(t, `[[driver]]
label = "pets"
type = "rest"
spec = "`+srv.URL+`/openapi.json"
[middleware.hooks]
audit_log = "audit.jsonl"
`)
	if r := mcsRun(t, "", "--stack", filepath.Join(dir, "mcs.toml"), "call", "getInventory"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil || !strings.Contains(string(b), `"tool":"getInventory"`) {
		t.Fatalf("audit file: %v, %q", err, b)
	}
}

// TestShortcuts declares drivers with --openapi, --fs and --csv.
func TestShortcuts(t *testing.T) {
	srv := serveStore(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("x,y\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mcsRun(t, "", "--openapi", srv.URL+"/openapi.json", "--fs", dir, "--csv", dir, "tools")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, s := range []string{"api__findPetsByStatus", "files__read_file", "csv__read_csv_head"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %s:\n%s", s, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "files__write_file") {
		t.Errorf("--fs is not read-only:\n%s", r.stdout)
	}
	r = mcsRun(t, "", "--openapi", "x.json", "--stack", "y.toml", "tools")
	if r.code != 2 || !strings.Contains(r.stderr, "exclude each other") {
		t.Errorf("--stack with --openapi: exit %d, %s", r.code, r.stderr)
	}
}

// TestProgress checks that progress goes to stderr only when it is a terminal.
func TestProgress(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var out, errOut bytes.Buffer
		a := &app{stdout: &out, stderr: &errOut, terminal: func(any) bool { return tty }}
		stop := a.progress("loading the tools")
		stop()
		stop()
		got := errOut.String()
		if tty != strings.HasPrefix(got, "\rmcs: loading the tools...") {
			t.Errorf("terminal %v: stderr %q", tty, got)
		}
		if tty && !strings.HasSuffix(got, "\r\033[K") {
			t.Errorf("the progress line is not cleared: %q", got)
		}
	}
}

var _ http.Handler = demo.NewStore().Handler()

// TestInspectInterrupt checks that the inspector leaves when the context ends
// (an interrupt) while it waits for a line.
func TestInspectInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	out := &promptWriter{prompts: make(chan struct{}, 10)}
	var errOut bytes.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, []string{"inspect"}, pr, out, &errOut) }()
	<-out.prompts // the first prompt: the inspector waits for a line
	if _, err := pw.Write([]byte("list\n")); err != nil {
		t.Fatal(err)
	}
	<-out.prompts // the list is shown and the inspector waits again
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after an interrupt, want 0; stderr:\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "pets__findPetsByStatus") {
		t.Errorf("the list was not shown:\n%s", out.String())
	}
}

// promptWriter collects output and signals every prompt of the inspector.
type promptWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	prompts chan struct{}
}

func (w *promptWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte("mcs> ")) {
		w.prompts <- struct{}{}
	}
	return w.buf.Write(p)
}

func (w *promptWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestCompleteTool checks the shell completion of tool names.
func TestCompleteTool(t *testing.T) {
	r := mcsRun(t, "", "__complete", "call", "pets__get")
	if r.code != 0 || !strings.Contains(r.stdout, "pets__getPetById\npets__getInventory\n") {
		t.Errorf("completion: exit %d\n%s", r.code, r.stdout)
	}
}

// TestBrokenStackFiles compares the errors of broken stack files with their
// golden files: every problem with file, line and key, and nothing runs.
func TestBrokenStackFiles(t *testing.T) {
	for _, name := range []string{"broken", "secret"} {
		t.Run(name, func(t *testing.T) {
			r := mcsRun(t, "", "--stack", filepath.Join("testdata", name+".toml"), "tools")
			if r.code != 2 || r.stdout != "" {
				t.Fatalf("exit code %d, want 2; stdout:\n%s", r.code, r.stdout)
			}
			if strings.Contains(r.stderr, "ghp_") {
				t.Errorf("the error shows the token:\n%s", r.stderr)
			}
			golden(t, name+"-stderr", r.stderr)
		})
	}
}

// TestBudgetWarnings measures a stack of 130 tools: over OpenAI's limit of 128
// it warns and says what to do; behind tool_search the listing is one tool.
func TestBudgetWarnings(t *testing.T) {
	var paths []string
	for i := range 130 {
		paths = append(paths, fmt.Sprintf(`"/items%d": {"get": {"operationId": "getItem%d", "summary": "Get item set %d", "responses": {"200": {"description": "ok"}}}}`, i, i, i))
	}
	spec := `{"openapi": "3.0.3", "info": {"title": "Many", "version": "1"}, "servers": [{"url": "http://127.0.0.1:1"}], "paths": {` + strings.Join(paths, ",") + `}}`
	for _, tc := range []struct{ name, strategy string }{
		{"tools-budget-many", ""},
		{"tools-budget-search", "[orchestrator]\nstrategy = [\"namespacing\", \"tool_search\"]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeStack(t, "[[driver]]\nlabel = \"many\"\ntype = \"rest\"\nspec = \"many.json\"\n"+tc.strategy)
			if err := os.WriteFile(filepath.Join(dir, "many.json"), []byte(spec), 0o600); err != nil {
				t.Fatal(err)
			}
			r := mcsRun(t, "", "tools", "--budget")
			if r.code != 0 {
				t.Fatalf("exit code %d, stderr:\n%s", r.code, r.stderr)
			}
			golden(t, tc.name, r.stdout)
		})
	}
}

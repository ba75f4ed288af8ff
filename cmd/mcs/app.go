package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/cmd/mcs/internal/demo"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/stack"
)

// Exit codes of mcs.
const (
	exitOK      = 0 // success
	exitFailed  = 1 // a tool failed or was denied; health WARNING or UNKNOWN
	exitUsage   = 2 // a usage or stack error; health ERROR
	exitPending = 3 // the call waits for approval (mcs call); it did not run

	exitInterrupted = 130 // interrupted (Ctrl-C), as shells report it: 128 + SIGINT
)

// exitError carries the exit code of a failed command. An error that is not an
// exitError exits with exitUsage.
type exitError struct {
	code int
	err  error // nil: nothing more to print
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// failed is a tool that failed or was denied: exit code 1.
func failed(format string, args ...any) error {
	return &exitError{code: exitFailed, err: fmt.Errorf(format, args...)}
}

// commands are the constructors of the subcommands; each command's file adds its
// own with addCommand in an init function.
var commands []func(*app) *cobra.Command

func addCommand(f func(*app) *cobra.Command) { commands = append(commands, f) }

// app is one run of mcs: its streams, its global flags and the stack it loads.
type app struct {
	stdin          *bufio.Reader // shared by every reader of stdin (inspector, consent prompt)
	stdout, stderr io.Writer
	terminal       func(f any) bool // reports whether a stream is a terminal
	stdinTTY       bool             // stdin is a terminal: typed input is echoed by it

	stackFile string
	openapi   []string
	fs        []string
	csv       []string
	baseURL   string
	yes       bool

	// ask answers the permission questions of the stack; nil means asking on
	// stderr and reading the answer from stdin. A command whose stdin is not
	// the user's (serve-mcp) sets it before the stack is built: nobody can be
	// asked then, so the driver flags' writes are refused and a stack file that
	// needs trust is not trusted.
	ask permission.ConsentFunc
	// prompt, when set and ask is not, asks the user in place of the default
	// question on stderr (chat asks inside the chat).
	prompt permission.ConsentFunc

	ctx        context.Context // the run's, for questions while the stack loads
	completing bool            // shell completion: no question, no notice

	st     *stack.Stack
	demo   *demo.Demo
	driver mcs.Driver
}

// run runs mcs with args and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: bufio.NewReader(stdin), stdout: stdout, stderr: stderr, terminal: isTerminal, ctx: ctx}
	a.stdinTTY = stdinIsTerminal(stdin)
	defer a.close()
	root := a.root()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := safeText(oneLine(err.Error())); msg != "" {
		fmt.Fprintln(stderr, "mcs: "+msg)
	}
	return code
}

// stdinIsTerminal reports whether stdin is a terminal; tests replace it.
var stdinIsTerminal = func(stdin io.Reader) bool { return isTerminal(stdin) }

// oneLine trims a message. Every error is one line, except a list of stack
// file problems, which keeps one problem per line, each prefixed "mcs: ".
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\nmcs: ")
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcs",
		Short: "Inspect, call and compose MCS drivers from the terminal",
		Long: `mcs inspects, calls and composes MCS drivers. The drivers and their middleware
are declared in a stack file: mcs.toml in the current directory, or --stack FILE.
An mcs.toml found in the current directory that starts programs, sends
credentials or writes outside its directory is built only once trusted (see
mcs trust).
--openapi, --fs and --csv declare drivers without a file: their calls are
audited on stderr, reads run and every other call is asked (--yes runs them
unasked; serve-mcp over stdio, where nobody can be asked, refuses them). With
neither, mcs runs
its embedded demo: a pet store API served on loopback and a small CSV data set,
behind an audit log and a permission policy.

Exit codes: 0 success, 1 a tool failed, was denied, needs authentication or got invalid
arguments (health: WARNING or UNKNOWN), 2 a usage or stack error (health: ERROR),
3 the call waits for approval (mcs call; see mcs approvals), 130 interrupted (Ctrl-C).`,
		Example: `  mcs tools
  mcs call pets__findPetsByStatus status=available
  mcs inspect
  mcs --openapi https://petstore3.swagger.io/api/v3/openapi.json tools
  mcs --stack mcs.toml serve-mcp --http 127.0.0.1:8080`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: false},
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return fmt.Errorf("%w; see %s --help", err, c.CommandPath())
	})
	f := root.PersistentFlags()
	f.StringVarP(&a.stackFile, "stack", "s", "", "the stack file (default: "+stack.DefaultFile+" in the current directory, else the embedded demo)")
	f.StringArrayVar(&a.openapi, "openapi", nil, "an OpenAPI or Swagger document (URL or file) to use as a driver, instead of a stack file; repeatable")
	f.StringArrayVar(&a.fs, "fs", nil, "a directory to use with the filesystem driver (read-only); repeatable")
	f.StringArrayVar(&a.csv, "csv", nil, "a directory of CSV files to use with the CSV driver; repeatable")
	f.StringVar(&a.baseURL, "base-url", "", "the base URL of the --openapi APIs, replacing the documents' servers")
	f.BoolVarP(&a.yes, "yes", "y", false, "run every call of the --openapi, --fs and --csv drivers without asking, writes included (by default reads run and the rest is asked); with mcs trust: trust without asking")
	for _, c := range commands {
		root.AddCommand(c(a))
	}
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = "  mcs completion bash > /etc/bash_completion.d/mcs\n  source <(mcs completion zsh)"
		}
	}
	return root
}

// usageArgs wraps a positional argument check so that its error says where to
// look.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return fmt.Errorf("%w; usage: %s", err, c.UseLine())
		}
		return nil
	}
}

// load parses the stack the flags select, without building it.
func (a *app) load() (*stack.Stack, error) {
	if a.st != nil {
		return a.st, nil
	}
	shortcuts := len(a.openapi) + len(a.fs) + len(a.csv)
	var st *stack.Stack
	var err error
	switch {
	case shortcuts > 0 && a.stackFile != "":
		return nil, errors.New("--stack and the driver flags (--openapi, --fs, --csv) exclude each other; use one or the other")
	case shortcuts > 0:
		policy := policyAsk
		switch {
		case a.yes:
			policy = policyYes
			fmt.Fprintln(a.stderr, noticeYes)
		case a.ask != nil || a.completing:
			policy = policyReadOnly
			if !a.completing {
				fmt.Fprintln(a.stderr, noticeReadOnly)
			}
		}
		st, err = stack.Parse("command line", shortcutStack(a.openapi, a.fs, a.csv, a.baseURL, policy))
	case a.yes:
		return nil, errors.New("--yes applies to the --openapi, --fs and --csv drivers (and to mcs trust); a stack file decides what runs unasked in its [middleware.permission] table")
	case a.baseURL != "":
		return nil, errors.New("--base-url applies to --openapi drivers only; set base_url in the stack file instead")
	case a.stackFile != "":
		st, err = stack.Load(a.stackFile)
	default:
		if _, statErr := os.Stat(stack.DefaultFile); statErr == nil {
			// Found, not chosen: it starts programs or writes outside its
			// directory only when the user trusts it.
			var f *stackFile
			if f, err = readStackFile(stack.DefaultFile); err != nil {
				return nil, err
			}
			if st, err = stack.Parse(f.name, f.data); err != nil {
				return nil, err
			}
			ctx := a.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if err := a.checkTrust(ctx, st, f); err != nil {
				return nil, err
			}
			break
		}
		d, derr := demo.Start()
		if derr != nil {
			return nil, derr
		}
		a.demo = d
		fmt.Fprintln(a.stderr, "mcs: no "+stack.DefaultFile+" here and no driver flag: using the embedded demo (a pet store API and a CSV data set); see mcs --help")
		st, err = stack.Parse("embedded demo stack", d.Stack())
	}
	if err != nil {
		return nil, err
	}
	consent := a.ask
	if consent == nil {
		consent = a.prompt
	}
	if consent == nil {
		consent = a.consent()
	}
	st.Host = stack.Host{Consent: consent, Stderr: a.stderr}
	a.st = st
	return st, nil
}

// build loads and builds the stack once.
func (a *app) build(ctx context.Context) (mcs.Driver, error) {
	if a.driver != nil {
		return a.driver, nil
	}
	st, err := a.load()
	if err != nil {
		return nil, err
	}
	stop := a.progress("building the stack")
	d, err := st.Build(ctx)
	stop()
	if err != nil {
		return nil, err
	}
	a.driver = d
	return d, nil
}

// toolDriver is the built stack's technical half: every driver the stack builds
// is also a tool driver.
func (a *app) toolDriver(ctx context.Context) (mcs.ToolDriver, error) {
	d, err := a.build(ctx)
	if err != nil {
		return nil, err
	}
	td, ok := d.(mcs.ToolDriver)
	if !ok {
		return nil, fmt.Errorf("the stack's driver (%s) does not list its tools", d.Meta().ID)
	}
	return td, nil
}

// tools lists the stack's tools, showing progress while a large document loads.
func (a *app) tools(ctx context.Context) ([]mcs.Tool, mcs.ToolDriver, error) {
	td, err := a.toolDriver(ctx)
	if err != nil {
		return nil, nil, err
	}
	stop := a.progress("loading the tools")
	tools, err := td.ListTools(ctx)
	stop()
	if err != nil {
		return nil, nil, fmt.Errorf("list the tools: %w", err)
	}
	return tools, td, nil
}

// close releases the stack and the demo.
func (a *app) close() {
	if a.st != nil {
		if err := a.st.Close(); err != nil {
			fmt.Fprintln(a.stderr, "mcs: "+err.Error())
		}
	}
	if a.demo != nil {
		_ = a.demo.Close()
	}
}

// consent asks on stderr and reads the answer from stdin. When stdin is not a
// terminal, the answer is not echoed, so a line end follows the question.
func (a *app) consent() permission.ConsentFunc {
	ask := permission.Prompt(a.stdin, a.stderr)
	if a.stdinTTY {
		return ask
	}
	return func(ctx context.Context, name string, args map[string]any) (bool, error) {
		ok, err := ask(ctx, name, args)
		fmt.Fprintln(a.stderr)
		return ok, err
	}
}

// completeTool completes the first argument with the names of the stack's
// tools, for shell completion.
func (a *app) completeTool(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	a.completing = true
	tools, _, err := a.tools(c.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, t := range tools {
		if strings.HasPrefix(t.Name, prefix) {
			names = append(names, t.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

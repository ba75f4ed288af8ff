package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
)

func init() { addCommand(newInspectCommand) }

const inspectHelp = `Commands:
  list                 list the tools (also: l, ls)
  show TOOL            describe a tool (also: s TOOL, or just the number or name)
  run TOOL             run a tool, asking for each parameter (also: r TOOL)
  help                 this text (also: ?)
  quit                 leave (also: q, exit, or end of input)
TOOL is a number from the list, a name, or part of a name.`

func newInspectCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect",
		Short: "Explore and run the tools interactively",
		Long: `inspect is an interactive loop over the stack's tools. It starts with the table
of the tools, as list shows it; then list them, show one by
number or name (part of a name is enough; mcs asks when it matches several), run
one with a prompt per parameter (type hints, defaults; "<<" starts an input of
several lines that ends with a line holding only "."), quit.

It reads lines from stdin, so it can be driven by a script as well as by a person.

` + inspectHelp,
		Example: `  mcs inspect
  printf 'list\nrun find\navailable\n\nquit\n' | mcs inspect`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			tools, td, err := a.tools(c.Context())
			if err != nil {
				return err
			}
			in := &inspector{ctx: c.Context(), a: a, tools: tools, td: td}
			return in.loop(c.Context())
		},
	}
}

type inspector struct {
	ctx   context.Context
	a     *app
	tools []mcs.Tool
	td    mcs.ToolDriver
}

// printf writes to stdout, made safe for a terminal: names, hints and errors
// come from drivers.
func (in *inspector) printf(format string, args ...any) {
	fmt.Fprint(in.a.stdout, safeText(fmt.Sprintf(format, args...)))
}

// readLine reads one line of stdin without its line end; io.EOF at the end of
// input, the context's error when it ends first (an interrupt). The read runs
// on its own goroutine so that an interrupt need not wait for a line; when ctx
// ends the command ends, so the abandoned read takes nothing from anyone.
func (in *inspector) readLine() (string, error) {
	type read struct {
		line string
		err  error
	}
	ch := make(chan read, 1)
	go func() {
		line, err := in.a.stdin.ReadString('\n')
		ch <- read{line, err}
	}()
	var line string
	var err error
	select {
	case r := <-ch:
		line, err = r.line, r.err
	case <-in.ctx.Done():
		return "", in.ctx.Err()
	}
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if !in.a.stdinTTY {
		in.printf("%s\n", line) // a terminal echoes what is typed; a pipe does not
	}
	return line, nil
}

func (in *inspector) loop(ctx context.Context) error {
	// The tool table first, as list shows it: what there is to show or run.
	in.list()
	in.printf("%d tools. Type help for the commands.\n", len(in.tools))
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		in.printf("mcs> ")
		line, err := in.readLine()
		if err != nil {
			in.printf("\n")
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil // end of input or an interrupt: leave
			}
			return err
		}
		cmd, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		arg = strings.TrimSpace(arg)
		switch strings.ToLower(cmd) {
		case "":
		case "q", "quit", "exit":
			return nil
		case "?", "h", "help":
			in.printf("%s\n", inspectHelp)
		case "l", "ls", "list":
			in.list()
		case "s", "show":
			if t, ok := in.pick(arg); ok {
				_ = describe(in.a.stdout, t)
			}
		case "r", "run":
			if t, ok := in.pick(arg); ok {
				in.run(ctx, t)
			}
		default:
			if t, ok := in.pick(strings.TrimSpace(line)); ok {
				_ = describe(in.a.stdout, t)
			}
		}
	}
}

func (in *inspector) list() {
	for i, t := range in.tools {
		title := t.Title
		if title == "" {
			title = t.Description
		}
		in.printf("%3d  %s  %s\n", i+1, safeText(t.Name), safeText(firstLine(title, 60)))
	}
}

// pick finds the tool a user means: a number of the list, an exact name, or the
// only name that contains the text; when several contain it, the user chooses.
func (in *inspector) pick(q string) (mcs.Tool, bool) {
	if q == "" {
		in.printf("Which tool? Give a number, a name or part of a name.\n")
		return mcs.Tool{}, false
	}
	if n, err := strconv.Atoi(q); err == nil {
		if n >= 1 && n <= len(in.tools) {
			return in.tools[n-1], true
		}
		in.printf("There is no tool %d; the tools are numbered 1 to %d.\n", n, len(in.tools))
		return mcs.Tool{}, false
	}
	var matches []mcs.Tool
	for _, t := range in.tools {
		if t.Name == q {
			return t, true
		}
		if strings.Contains(strings.ToLower(t.Name), strings.ToLower(q)) {
			matches = append(matches, t)
		}
	}
	switch len(matches) {
	case 0:
		in.printf("No tool matches %q; type list to see them.\n", q)
		return mcs.Tool{}, false
	case 1:
		return matches[0], true
	}
	in.printf("%q matches %d tools:\n", q, len(matches))
	for i, t := range matches {
		in.printf("%3d  %s\n", i+1, safeText(t.Name))
	}
	in.printf("Which one (1-%d, empty to cancel)? ", len(matches))
	line, err := in.readLine()
	if err != nil {
		in.printf("\n")
		return mcs.Tool{}, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || n < 1 || n > len(matches) {
		if strings.TrimSpace(line) != "" {
			in.printf("Not a choice; cancelled.\n")
		}
		return mcs.Tool{}, false
	}
	return matches[n-1], true
}

// run asks for each parameter and runs the tool.
func (in *inspector) run(ctx context.Context, t mcs.Tool) {
	args := map[string]any{}
	if len(t.Parameters) > 0 {
		in.printf("Running %s. Empty input keeps the default or leaves an optional parameter out; << starts several lines ended by a lone \".\".\n", t.Name)
	}
	for _, p := range t.Parameters {
		v, ok, err := in.ask(p)
		if err != nil {
			in.printf("\nCancelled: %v\n", err)
			return
		}
		if ok {
			args[p.Name] = v
		}
	}
	if err := in.a.runTool(ctx, in.td, t.Name, args); err != nil {
		in.printf("%v\n", err)
	}
}

// ask reads one parameter's value; ok is false when it is left out.
func (in *inspector) ask(p mcs.Parameter) (any, bool, error) {
	hint := typeHint(p.Schema)
	if e := enumHint(p.Schema); e != "" {
		hint += ", one of " + e
	}
	def, hasDef := defaultHint(p.Schema)
	if hasDef {
		hint += ", default " + def
	}
	if p.Required {
		hint += ", required"
	}
	for {
		in.printf("%s (%s): ", p.Name, hint)
		line, err := in.readLine()
		if err != nil {
			return nil, false, err
		}
		if strings.TrimSpace(line) == "<<" {
			var lines []string
			for {
				l, err := in.readLine()
				if err != nil {
					return nil, false, err
				}
				if l == "." {
					break
				}
				lines = append(lines, l)
			}
			line = strings.Join(lines, "\n")
		}
		if line == "" {
			switch {
			case hasDef:
				v, err := coerce(p, def)
				if err != nil {
					return def, true, nil
				}
				return v, true, nil
			case !p.Required:
				return nil, false, nil
			}
			in.printf("%s is required.\n", p.Name)
			continue
		}
		v, err := coerce(p, line)
		if err != nil {
			in.printf("%v\n", err)
			continue
		}
		return v, true, nil
	}
}

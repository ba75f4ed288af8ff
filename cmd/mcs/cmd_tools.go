package main

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/budget"
)

func init() { addCommand(newToolsCommand) }

// toolJSON is the shape of one tool in mcs tools --json.
type toolJSON struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  []parameterJSON `json:"parameters"`
}

type parameterJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required"`
	Schema      map[string]any `json:"schema,omitempty"`
}

func toJSON(t mcs.Tool) toolJSON {
	out := toolJSON{Name: t.Name, Title: t.Title, Description: t.Description, Parameters: []parameterJSON{}}
	for _, p := range t.Parameters {
		out.Parameters = append(out.Parameters, parameterJSON{Name: p.Name, Description: p.Description, Required: p.Required, Schema: p.Schema})
	}
	return out
}

func newToolsCommand(a *app) *cobra.Command {
	var asJSON, budget bool
	var model string
	c := &cobra.Command{
		Use:   "tools",
		Short: "List the tools of the stack",
		Long: `tools lists the tools the stack gives a model: number, name, title and number of parameters.

With --budget it prints instead what the stack sends to a model with every
request: the size of the text-mode system message (which inlines every tool),
the size of the native tool objects and the native system message, token
estimates (four bytes a token, good to about 25%), and a warning for each limit
exceeded (more than 128 tools, which OpenAI rejects in one request, or more than
16,000 estimated tokens). No model is asked.`,
		Example: `  mcs tools
  mcs tools --json
  mcs tools --budget --model gpt-4o
  mcs --openapi openapi.json tools`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if budget {
				return a.printBudget(c.Context(), model, asJSON)
			}
			if c.Flags().Changed("model") {
				return fmt.Errorf("--model applies to --budget; usage: %s", c.UseLine())
			}
			tools, _, err := a.tools(c.Context())
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]toolJSON, len(tools))
				for i, t := range tools {
					out[i] = toJSON(t)
				}
				return writeJSON(a.stdout, out)
			}
			w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "#\tNAME\tTITLE\tPARAMS")
			for i, t := range tools {
				title := t.Title
				if title == "" {
					title = t.Description
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%d\n", i+1, safeText(t.Name), safeText(firstLine(title, 60)), len(t.Parameters))
			}
			return w.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the tools as JSON, with their full parameter schemas (with --budget: the budget as JSON)")
	c.Flags().BoolVar(&budget, "budget", false, "print the size of what the stack sends to a model with every request, with warnings")
	c.Flags().StringVar(&model, "model", "", "with --budget: the model the prompt is for, such as gpt-4o")
	return c
}

// budgetJSON is the shape of mcs tools --budget --json.
type budgetJSON struct {
	Model                    string   `json:"model"`
	Tools                    int      `json:"tools"`
	SystemMessageBytes       int      `json:"system_message_bytes"`
	TextTokens               int      `json:"text_tokens"`
	Native                   bool     `json:"native"`
	NativeSystemMessageBytes int      `json:"native_system_message_bytes"`
	NativeToolsBytes         int      `json:"native_tools_bytes"`
	NativeTokens             int      `json:"native_tokens"`
	Warnings                 []string `json:"warnings"`
}

// printBudget measures the stack's prompt for model (budget.Measure) and
// prints it as a table, or as JSON.
func (a *app) printBudget(ctx context.Context, model string, asJSON bool) error {
	d, err := a.build(ctx)
	if err != nil {
		return err
	}
	stop := a.progress("measuring the prompt")
	b, err := budget.Measure(ctx, d, model)
	stop()
	if err != nil {
		return err
	}
	if asJSON {
		warnings := b.Warnings
		if warnings == nil {
			warnings = []string{}
		}
		return writeJSON(a.stdout, budgetJSON{Model: b.Model, Tools: b.Tools, SystemMessageBytes: b.SystemMessageBytes, TextTokens: b.TextTokens,
			Native: b.Native, NativeSystemMessageBytes: b.NativeSystemMessageBytes, NativeToolsBytes: b.NativeToolsBytes, NativeTokens: b.NativeTokens,
			Warnings: warnings})
	}
	m := b.Model
	if m == "" {
		m = "(any)"
	}
	nativeNote := "(the driver sends native tools to this model)"
	if !b.Native {
		nativeNote = "(what native tools would cost; the driver sends none to this model)"
	}
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "model\t%s\n", safeText(m))
	fmt.Fprintf(w, "tools\t%d\n", b.Tools)
	fmt.Fprintf(w, "text mode: system message\t%s bytes\tabout %s tokens\t(every tool inlined)\n", thousands(b.SystemMessageBytes), thousands(b.TextTokens))
	fmt.Fprintf(w, "native mode: system message\t%s bytes\n", thousands(b.NativeSystemMessageBytes))
	fmt.Fprintf(w, "native mode: tool objects\t%s bytes\n", thousands(b.NativeToolsBytes))
	fmt.Fprintf(w, "native mode: total\t%s bytes\tabout %s tokens\t%s\n", thousands(b.NativeSystemMessageBytes+b.NativeToolsBytes), thousands(b.NativeTokens), nativeNote)
	if err := w.Flush(); err != nil {
		return err
	}
	if len(b.Warnings) == 0 {
		_, err = fmt.Fprintln(a.stdout, "no warnings")
		return err
	}
	for _, msg := range b.Warnings {
		fmt.Fprintf(a.stdout, "warning: %s\n", safeText(msg))
	}
	_, err = fmt.Fprintln(a.stdout, `in a stack file: ToolSearch is [orchestrator] strategy = ["namespacing", "tool_search"], DetailLoading is the layer "detail_loading", IncludeTags and IncludePaths are the REST keys include_tags and include_paths`)
	return err
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

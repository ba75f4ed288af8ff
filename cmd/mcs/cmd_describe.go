package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
)

func init() { addCommand(newDescribeCommand) }

func newDescribeCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:               "describe TOOL",
		Short:             "Show a tool's description and parameters",
		Long:              "describe shows one tool: its description and a table of its parameters (name, required, type, allowed values, default, description).",
		Example:           "  mcs describe pets__findPetsByStatus",
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: a.completeTool,
		RunE: func(c *cobra.Command, args []string) error {
			tools, td, err := a.tools(c.Context())
			if err != nil {
				return err
			}
			t, err := resolveTool(c.Context(), td, tools, args[0])
			if err != nil {
				return err
			}
			return describe(a.stdout, t)
		},
	}
}

// describe writes a tool's description and parameter table, safe for a
// terminal.
func describe(out io.Writer, t mcs.Tool) error {
	var b strings.Builder
	if err := describeTo(&b, t); err != nil {
		return err
	}
	_, err := io.WriteString(out, safeText(b.String()))
	return err
}

func describeTo(out io.Writer, t mcs.Tool) error {
	fmt.Fprintln(out, t.Name)
	if t.Title != "" && t.Title != t.Description {
		fmt.Fprintln(out, "  "+t.Title)
	}
	if t.Description != "" {
		fmt.Fprintln(out)
		for _, line := range strings.Split(strings.TrimSpace(t.Description), "\n") {
			fmt.Fprintln(out, "  "+line)
		}
	}
	fmt.Fprintln(out)
	if len(t.Parameters) == 0 {
		fmt.Fprintln(out, "No parameters.")
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "PARAMETER\tREQUIRED\tTYPE\tENUM\tDEFAULT\tDESCRIPTION")
	for _, p := range t.Parameters {
		req := "no"
		if p.Required {
			req = "yes"
		}
		def, _ := defaultHint(p.Schema)
		desc := p.Description
		if desc == "" {
			desc, _ = p.Schema["description"].(string)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, req, typeHint(p.Schema), dash(enumHint(p.Schema)), dash(def), firstLine(desc, 70))
	}
	return w.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

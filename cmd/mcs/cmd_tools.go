package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
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
	var asJSON bool
	c := &cobra.Command{
		Use:   "tools",
		Short: "List the tools of the stack",
		Long:  "tools lists the tools the stack gives a model: number, name, title and number of parameters.",
		Example: `  mcs tools
  mcs tools --json
  mcs --openapi openapi.json tools`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
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
	c.Flags().BoolVar(&asJSON, "json", false, "print the tools as JSON, with their full parameter schemas")
	return c
}

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
)

func init() { addCommand(newPromptCommand) }

func newPromptCommand(a *app) *cobra.Command {
	var native bool
	var model string
	c := &cobra.Command{
		Use:   "prompt",
		Short: "Print the system message a model gets",
		Long: `prompt prints the system message the stack gives a model that calls tools in
text. With --native it prints, as JSON, the native tool context for APIs that take
tools as structured objects: the system message without the tool listing, and the
tools in the OpenAI function-tool format.`,
		Example: `  mcs prompt
  mcs prompt --native --model gpt-4o`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			d, err := a.build(c.Context())
			if err != nil {
				return err
			}
			stop := a.progress("loading the tools")
			defer stop()
			if !native {
				msg, err := d.SystemMessage(c.Context(), model)
				if err != nil {
					return fmt.Errorf("build the system message: %w", err)
				}
				stop()
				_, err = fmt.Fprintln(a.stdout, msg)
				return err
			}
			n, ok := d.(mcs.SupportsNativeTools)
			if !ok {
				return fmt.Errorf("the stack's driver (%s) has no native tool context; run mcs prompt without --native", d.Meta().ID)
			}
			ntc, err := n.NativeToolContext(c.Context(), model)
			if err != nil {
				return fmt.Errorf("build the native tool context: %w", err)
			}
			stop()
			tools := ntc.Tools
			if tools == nil {
				tools = []mcs.FunctionTool{}
			}
			return writeJSON(a.stdout, map[string]any{"system_message": ntc.SystemMessage, "tools": tools})
		},
	}
	c.Flags().BoolVar(&native, "native", false, "print the native tool context as JSON")
	c.Flags().StringVar(&model, "model", "", "the model the prompt is for, such as gpt-4o")
	return c
}

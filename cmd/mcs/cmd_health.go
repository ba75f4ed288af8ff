package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs"
)

func init() { addCommand(newHealthCommand) }

func newHealthCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Check the health of the stack",
		Long: `health runs the stack's healthcheck and prints its status and detail.
Exit code 0 for OK, 1 for WARNING or UNKNOWN, 2 for ERROR.`,
		Example: "  mcs health && echo healthy",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			d, err := a.build(c.Context())
			if err != nil {
				return err
			}
			res := mcs.HealthResult{Status: mcs.HealthUnknown, Detail: "the stack's driver has no healthcheck"}
			if h, ok := d.(mcs.SupportsHealthcheck); ok {
				stop := a.progress("checking")
				res = h.Healthcheck(c.Context())
				stop()
			}
			line := string(res.Status)
			if res.Detail != "" {
				line += ": " + res.Detail
			}
			fmt.Fprintln(a.stdout, line)
			switch res.Status {
			case mcs.HealthOK:
				return nil
			case mcs.HealthError:
				return &exitError{code: exitUsage}
			}
			return &exitError{code: exitFailed}
		},
	}
}

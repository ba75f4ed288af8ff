package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs/stack"
)

func init() { addCommand(newTrustCommand) }

func newTrustCommand(a *app) *cobra.Command {
	var forget, list bool
	c := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Review a stack file that starts programs, sends credentials or writes outside its directory, and trust it",
		Long: `trust shows what a stack file (default: ` + stack.DefaultFile + `) does on this machine when
it is built, the programs it starts (MCP servers with a command, with their
arguments, working directory and the variables they get), the credentials it
sends to the hosts it names (the MCS_TOKEN_ variables of credentials = "env", a
sign-in) and the files it writes outside its directory (audit logs, token
stores, cache directories, writable filesystem roots), and asks whether to
trust it.

mcs builds a stack file it finds in the current directory (one it was not
given with --stack) only when it does none of these, or when it is trusted:
a cloned repository's mcs.toml must not run programs, nor send a token to a
host of its choosing, because it was typed in it. The first time, mcs asks on the terminal; without a terminal it
refuses. A trust decision holds for the file's path and exact content (its
SHA-256): a changed file asks again. Decisions are kept in
$MCS_CONFIG_DIR/trusted, else mcs/trusted under the user's configuration
directory (such as ~/.config/mcs/trusted), readable by the user only.

--yes trusts without asking (for scripts, after reading the file); --forget
drops the decision for the file; --list shows the trusted files.`,
		Example: `  mcs trust
  mcs trust --yes project/mcs.toml
  mcs trust --list
  mcs trust --forget`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if len(a.openapi)+len(a.fs)+len(a.csv) > 0 || a.stackFile != "" || a.baseURL != "" {
				return errors.New("mcs trust takes the stack file as its argument, not --stack or the driver flags; usage: " + c.UseLine())
			}
			if list {
				if len(args) > 0 || forget || a.yes {
					return errors.New("--list takes no file and no other flag; usage: " + c.UseLine())
				}
				entries, err := readTrust()
				if err != nil {
					return err
				}
				if len(entries) == 0 {
					fmt.Fprintln(a.stdout, "no trusted stack files")
				}
				for _, e := range entries {
					fmt.Fprintln(a.stdout, safeText(e.path+"  sha256:"+e.sum))
				}
				return nil
			}
			name := stack.DefaultFile
			if len(args) == 1 {
				name = args[0]
			}
			f, err := readStackFile(name)
			if err != nil {
				return err
			}
			if forget {
				if a.yes {
					return errors.New("--forget and --yes exclude each other")
				}
				entries, err := readTrust()
				if err != nil {
					return err
				}
				kept := slices.DeleteFunc(slices.Clone(entries), func(e trustEntry) bool { return e.path == f.abs })
				if len(kept) == len(entries) {
					fmt.Fprintf(a.stdout, "%s was not trusted\n", safeText(f.name))
					return nil
				}
				if err := writeTrust(kept); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "%s is no longer trusted\n", safeText(f.name))
				return nil
			}
			st, err := stack.Parse(f.name, f.data)
			if err != nil {
				return err
			}
			effects := untrustedEffects(st, f.name)
			if len(effects) == 0 {
				fmt.Fprintf(a.stdout, "%s starts no program, sends no credential and writes nothing outside its directory: it needs no trust\n", safeText(f.name))
				return nil
			}
			fmt.Fprintf(a.stdout, "%s (%s), sha256:%s, when built:\n", safeText(f.name), safeText(f.abs), f.sum)
			showEffects(a.stdout, effects)
			if ok, err := f.trusted(); err != nil || ok {
				if ok {
					fmt.Fprintln(a.stdout, "It is trusted.")
				}
				return err
			}
			if !a.yes {
				if !a.stdinTTY {
					return fmt.Errorf("no terminal to ask on; after reading %s, run mcs trust --yes %s", f.name, f.name)
				}
				yes, err := a.confirm(c.Context(), "Trust this file? [y/N] ")
				if err != nil {
					return err
				}
				if !yes {
					return failed("%s is not trusted", f.name)
				}
			}
			if err := f.trust(); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Trusted; a change to %s asks again.\n", safeText(f.name))
			return nil
		},
	}
	c.Flags().BoolVar(&forget, "forget", false, "drop the trust decision for the file")
	c.Flags().BoolVar(&list, "list", false, "list the trusted stack files")
	return c
}

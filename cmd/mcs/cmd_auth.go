package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs/cmd/mcs/internal/signins"
	"github.com/mcs-go/mcs/middleware/auth"
	"github.com/mcs-go/mcs/stack"
)

func init() { addCommand(newAuthCommand) }

func newAuthCommand(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "auth",
		Short: "Sign in to, list and sign out of the services the stack's drivers use",
		Long: `auth manages the sign-ins of the drivers whose stack table has credentials =
"oauth" (sign in in the browser: the authorization code flow with PKCE) or
"device" (the device flow). The tokens are kept in the token store: the driver's
token_store, else the [auth] table's store, else mcs-tokens.db next to the stack
file (for "oauth"). With MCS_TOKEN_KEY set, the store's tokens are sealed with
that key (32 bytes, base64 or hex; make one with openssl rand -base64 32).

Exit codes: 0 done; 1 the sign-in failed or the store failed (down, wrong key);
2 an unknown label or another usage error.`,
		Example: `  mcs auth login github
  mcs auth status
  mcs auth logout github`,
		Args: usageArgs(cobra.NoArgs),
	}
	c.AddCommand(newAuthLogin(a), newAuthStatus(a), newAuthLogout(a))
	return c
}

// signIn returns the sign-in of the driver labelled label.
func (a *app) signIn(label string) (*stack.Stack, stack.SignIn, error) {
	st, err := a.load()
	if err != nil {
		return nil, stack.SignIn{}, err
	}
	ins := st.SignIns()
	for _, in := range ins {
		if in.Label == label {
			return st, in, nil
		}
	}
	labels := make([]string, len(ins))
	for i, in := range ins {
		labels[i] = in.Label
	}
	if len(labels) == 0 {
		return nil, stack.SignIn{}, fmt.Errorf("no driver of %s signs in; give a driver credentials = \"oauth\" and a [driver.oauth] table", st.File)
	}
	return nil, stack.SignIn{}, fmt.Errorf("no driver labelled %q signs in; the drivers that do: %s", safeText(label), strings.Join(labels, ", "))
}

func newAuthLogin(a *app) *cobra.Command {
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "login LABEL",
		Short: "Sign in for a driver now, before it is used",
		Long: `login signs in for the driver labelled LABEL: it prints the link to open in a
browser on this computer (or the device code to enter) and waits until the
sign-in is complete, the sign-in is refused, or --timeout runs out. The token
goes to the token store, where every later run of the stack finds it.`,
		Example: `  mcs auth login github`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			st, in, err := a.signIn(args[0])
			if err != nil {
				return err
			}
			ctx := c.Context()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			p, err := st.CredentialProvider(ctx, in.Label)
			if err != nil {
				return failed("%v", err)
			}
			for _, scope := range in.Scopes {
				err := auth.SignIn(ctx, p, scope, func(ch *auth.Challenge) {
					if ch.Code != "" {
						fmt.Fprintf(a.stdout, "To sign in for %s, open this link and enter the code %s:\n\n  %s\n\nWaiting for the sign-in...\n", safeText(scope), safeText(ch.Code), safeText(ch.URL))
						return
					}
					fmt.Fprintf(a.stdout, "To sign in for %s, open this link in a browser on this computer:\n\n  %s\n\nWaiting for the sign-in...\n", safeText(scope), safeText(ch.URL))
				})
				if err != nil {
					return failed("sign in for %s: %v", safeText(scope), err)
				}
				fmt.Fprintf(a.stdout, "Signed in for %s.\n", safeText(scope))
			}
			return nil
		},
	}
	c.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (the sign-in itself ends after 10 minutes)")
	return c
}

func newAuthStatus(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "List the sign-ins: scopes and expiry, never a token",
		Long: `status lists, for every driver that signs in, each credential scope: whether a
token is stored, the OAuth scopes granted, when the access token expires and
whether it can be refreshed. No token is printed.`,
		Example: `  mcs auth status`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := a.load()
			if err != nil {
				return err
			}
			ins := st.SignIns()
			if len(ins) == 0 {
				fmt.Fprintf(a.stdout, "No driver of %s signs in.\n", st.File)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LABEL\tSCOPE\tMODE\tSTATE\tOAUTH SCOPES\tEXPIRES\tSTORE")
			var fails []string
			for _, r := range signins.Status(c.Context(), st) {
				if r.Err != nil {
					fails = append(fails, fmt.Sprintf("%s: %v", r.Label, r.Err))
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", safeText(r.Label), safeText(r.Scope), r.Mode, r.State(),
					dash(safeText(strings.Join(r.Token.Scopes, " "))), r.Expires(when), safeText(r.Store))
			}
			tw.Flush()
			if len(fails) > 0 {
				slices.Sort(fails)
				return failed("%s", strings.Join(fails, "; "))
			}
			return nil
		},
	}
}

func newAuthLogout(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "logout LABEL",
		Short: "Sign out for a driver: remove its tokens from the token store",
		Long: `logout removes the tokens of the driver labelled LABEL from the token store (every
process sharing the store sees it at its next call) and ends a pending sign-in.
The authorization server is not told; revoke the grant there too if needed.`,
		Example: `  mcs auth logout github`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			st, in, err := a.signIn(args[0])
			if err != nil {
				return err
			}
			if err := signins.SignOut(c.Context(), st, in); err != nil {
				return failed("%s", safeText(err.Error()))
			}
			fmt.Fprintf(a.stdout, "Signed out for %s.\n", safeText(in.Label))
			return nil
		},
	}
}

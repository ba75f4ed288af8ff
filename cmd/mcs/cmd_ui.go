package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcs-go/mcs/cmd/mcs/internal/console"
	"github.com/mcs-go/mcs/runner"
	"github.com/mcs-go/mcs/runner/anthropic"
	"github.com/mcs-go/mcs/runner/openai"
)

func init() { addCommand(newUICommand) }

// uiFlags are the flags of mcs ui.
type uiFlags struct {
	addr        string
	noOpen      bool
	allowRemote bool
	provider    string
	model       string
	baseURL     string
	native      bool
}

func newUICommand(a *app) *cobra.Command {
	var f uiFlags
	c := &cobra.Command{
		Use:   "ui [--addr 127.0.0.1:0] [--no-open] [--model M [--provider P] [--base-url URL]]",
		Short: "Serve a web console to see, try and approve what the model can do",
		Long: `ui serves a web console for the stack (the embedded demo when there is none) and
prints its URL. Its pages: Tools (search, a form for each tool, Run through the
whole stack), Prompt and budget (the system message and native tools per model),
Process (paste a model reply), Approvals (consent questions and the approval
store's requests: approve or deny, live), Audit (this process's audit records,
live, redacted), Auth (sign-ins waiting, token status without secrets) and, with
--model, Chat (as mcs chat, with the same consent and approvals).

The console listens on loopback only, unless --addr names another address and
--allow-remote is given. The printed URL holds a token made for this launch; the
first visit trades it for a cookie. Requests must name the console's own host,
changes its own origin and a CSRF token; pages run only the console's script.
Calls the stack asks about (ask = true) wait in the browser for an answer.

--model, --provider and --base-url choose the chat's model as for mcs chat
(--base-url is the model's endpoint here). The console runs until Ctrl-C.`,
		Example: `  mcs ui
  mcs ui --stack mcs.toml --addr 127.0.0.1:8765 --no-open
  mcs ui --model llama3.2 --base-url http://localhost:11434/v1`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return a.ui(c.Context(), f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:0", "the address to listen on (port 0: any free port); loopback unless --allow-remote")
	fl.BoolVar(&f.noOpen, "no-open", false, "do not open the console in a browser")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow --addr to name an address other than loopback (the token then travels unencrypted)")
	fl.StringVar(&f.provider, "provider", "openai", "the chat model's API: openai or anthropic")
	fl.StringVar(&f.model, "model", "", "the chat model; without it the console has no chat")
	fl.StringVar(&f.baseURL, "base-url", "", "the chat model's endpoint (default: OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the provider's)")
	fl.BoolVar(&f.native, "native", false, "send the tools to the chat model as native tool objects")
	return c
}

// checkAddr refuses an address that is not loopback unless remote is allowed.
func checkAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v; write host:port, such as 127.0.0.1:8765", safeText(addr), err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		return nil
	}
	if !allowRemote {
		return fmt.Errorf("--addr %q is not a loopback address: the console runs tools with your credentials; add --allow-remote to serve it to other machines", safeText(addr))
	}
	if host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("--addr %q listens on every address; name the one address to serve on, such as 192.0.2.10:8765", safeText(addr))
	}
	return nil
}

// chatModel builds the chat's model from the flags, as mcs chat does; nil
// without --model.
func chatModel(f uiFlags) (runner.Model, string, error) {
	if strings.TrimSpace(f.model) == "" {
		return nil, "", nil
	}
	switch strings.ToLower(strings.TrimSpace(f.provider)) {
	case "openai":
		m, err := openai.New(openai.Config{Model: f.model, BaseURL: f.baseURL})
		return m, "--base-url URL or OPENAI_BASE_URL", err
	case "anthropic":
		m, err := anthropic.New(anthropic.Config{Model: f.model, BaseURL: f.baseURL})
		return m, "--base-url URL or ANTHROPIC_BASE_URL", err
	}
	return nil, "", fmt.Errorf("--provider %q: unknown provider; use openai or anthropic", safeText(f.provider))
}

// ui serves the console until ctx ends.
func (a *app) ui(ctx context.Context, f uiFlags) error {
	if err := checkAddr(f.addr, f.allowRemote); err != nil {
		return err
	}
	model, hint, err := chatModel(f)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", safeText(f.addr), err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	srv, err := console.New(console.Config{Hosts: console.AllowedHosts(addr), DecidedBy: userName(), Model: model, Native: f.native, ModelHint: hint})
	if err != nil {
		return err
	}
	defer srv.Close()
	// The browser answers the stack's consent questions.
	a.prompt = srv.Consent
	// A stack that cannot be read or built is shown on every page, with its
	// file, line and key.
	st, err := a.load()
	if err == nil {
		st.Host.Audit = srv.AuditLogger()
		d, berr := a.build(ctx)
		srv.Attach(ctx, st, d, berr)
		err = berr
	} else {
		srv.Attach(ctx, nil, nil, err)
	}
	if err != nil {
		fmt.Fprintln(a.stderr, "mcs: "+safeText(oneLine(err.Error())))
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	url := "http://" + addr + "/?" + console.TokenParam + "=" + srv.Token()
	fmt.Fprintln(a.stdout, "mcs ui: serving the console at "+url)
	if !f.noOpen {
		openBrowser(url)
	}
	select {
	case <-ctx.Done():
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve the console: %w", err)
		}
	}
	srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return nil
}

// openBrowser opens url in the user's browser, when there is one to open.
func openBrowser(url string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if cmd.Start() == nil {
		go func() { _ = cmd.Wait() }()
	}
}

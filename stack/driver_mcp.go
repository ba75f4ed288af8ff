package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "mcp",
		Summary: "an MCP server (command = [...] for stdio, or url for streamable HTTP; env, env_pass, dir, headers, credentials, call_timeout, resources, prompts, roots, sampling)",
		Decode:  decodeMCP,
	})
}

var _ DriverConfig = (*mcpDriver)(nil)

type mcpDriver struct {
	cfg      mcp.Config
	label    string
	envPass  []string
	bearer   bool            // credentials = "env": Authorization: Bearer $MCS_TOKEN_<LABEL>
	creds    *credentialSpec // credentials = "oauth": the sign-in of a server that requires OAuth
	sampling bool            // sampling = true: the host's model answers the server's sampling requests
}

func (d *mcpDriver) signIn() *credentialSpec { return d.creds }

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// decodeMCP reads a [[driver]] table of type "mcp". Exactly one of command and
// url selects the server:
//
//	command = ["npx", "-y", "@modelcontextprotocol/server-everything"]  # stdio: the program and its arguments
//	env = {NODE_OPTIONS = "--max-old-space-size=256"}  # extra variables of the child (it inherits only PATH, HOME, ...)
//	env_pass = ["GITHUB_PERSONAL_ACCESS_TOKEN"]        # variables copied from this process's environment
//	dir = "./work"                                     # the child's working directory, relative to the stack file
//
//	url = "https://mcp.example.com/mcp"                # streamable HTTP
//	headers = {X-Team = "core"}
//	credentials = "env"                                # Authorization: Bearer $MCS_TOKEN_<LABEL>; or "oauth", "none" (the default)
//	[driver.oauth]                                     # credentials = "oauth": the server answers 401 with its metadata
//	client_id = "mcs"                                  # registered with the server's authorization server
//	scopes = ["tools"]                                 # optional; default: those the server names
//	token_store = "sqlite:tokens.db"                   # optional; default: the [auth] table's store, else sqlite:mcs-tokens.db
//
//	call_timeout = "60s"                               # each tool call; default 60s
//
//	resources = true                                   # the tools resources__list and resources__read
//	prompts = true                                     # the tool prompts__get
//	roots = ["./data"]                                 # what roots/list answers, relative to the stack file
//	sampling = true                                    # the program's model answers sampling requests, after consent
//
// The server's elicitation requests (it asks the user during a call) are
// answered by the consent handler of the stack's permission middleware when its
// table has ask = true, and declined otherwise. Its sampling requests, with
// sampling = true and a program that has a model (Host.Sampling, such as mcs
// chat), are shown to that handler, else to Host.Consent, and declined when
// there is neither.
func decodeMCP(t *Table, label string) DriverConfig {
	d := &mcpDriver{label: label}
	d.cfg.Command = t.Strings("command")
	if v, ok := t.get("command"); ok {
		if s, isString := v.(string); isString && strings.ContainsAny(strings.TrimSpace(s), " \t") {
			t.Errorf("command", "write the program and its arguments as a list, such as command = [\"npx\", \"-y\", \"@modelcontextprotocol/server-everything\"]")
		}
	}
	if t.Has("command") && (len(d.cfg.Command) == 0 || d.cfg.Command[0] == "") {
		t.Errorf("command", "names no program; write command = [\"program\", \"arg\", ...]")
	}
	d.cfg.URL = t.String("url")
	hasCommand, hasURL := t.Has("command"), t.Has("url")
	switch {
	case hasCommand && hasURL:
		t.Errorf("url", "command and url exclude each other; keep command for a server this program starts, url for one that runs already")
	case !hasCommand && !hasURL:
		t.Errorf("", "names no server; add command = [\"program\", \"arg\"] (stdio) or url = \"https://host/mcp\" (streamable HTTP)")
	case hasURL && d.cfg.URL != "" && !isURL(d.cfg.URL):
		t.Errorf("url", "%q is not an http or https URL; write one such as \"https://host/mcp\"", d.cfg.URL)
	}
	env := t.StringMap("env")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !envName.MatchString(k) {
			t.Errorf("env", "%q is not a variable name; use letters, digits and '_'", k)
			continue
		}
		d.cfg.Env = append(d.cfg.Env, k+"="+env[k])
	}
	d.envPass = t.Strings("env_pass")
	for _, k := range d.envPass {
		if !envName.MatchString(k) {
			t.Errorf("env_pass", "%q is not a variable name; use letters, digits and '_'", k)
		}
	}
	d.cfg.Dir = t.Path("dir")
	d.cfg.Headers = t.StringMap("headers")
	d.cfg.CallTimeout = t.Duration("call_timeout")
	d.cfg.Resources = t.Bool("resources")
	d.cfg.Prompts = t.Bool("prompts")
	d.sampling = t.Bool("sampling")
	for _, r := range t.Strings("roots") {
		switch {
		case strings.TrimSpace(r) == "":
			t.Errorf("roots", "holds an empty entry; list directories such as roots = [\"./data\"]")
		case strings.Contains(r, "://") && !strings.HasPrefix(r, "file://"):
			t.Errorf("roots", "%q is not a directory or a file:// URI", r)
		case strings.HasPrefix(r, "file://") || filepath.IsAbs(r):
			d.cfg.Roots = append(d.cfg.Roots, r)
		default:
			d.cfg.Roots = append(d.cfg.Roots, filepath.Join(t.Dir(), r))
		}
	}
	switch c := t.String("credentials"); c {
	case "", credentialsNone:
	case credentialsEnv:
		d.bearer = true
	case credentialsOAuth:
		d.creds = &credentialSpec{mode: credentialsOAuth, label: label, mcpURL: d.cfg.URL}
		o := t.Sub("oauth", fmt.Sprintf("[driver.oauth] of %q", label))
		d.creds.oauth.ClientID = o.String("client_id")
		if d.creds.oauth.ClientID == "" && !o.Has("client_id") {
			o.Errorf("client_id", "is required for credentials = %q", credentialsOAuth)
		}
		d.creds.oauth.Scopes = o.Strings("scopes")
		if v := o.String("token_store"); v != "" {
			u, err := tokenStoreURL(v, o.Dir())
			if err != nil {
				o.Errorf("token_store", "%v", err)
			}
			d.creds.store = u
		}
	default:
		t.Errorf("credentials", "%q is not a credential source of an MCP server; use \"env\" (a bearer token from %s), \"oauth\" (sign in in the browser; the server names its authorization server) or \"none\"", c, auth.EnvVarName(label))
	}
	if d.creds == nil && t.Has("oauth") {
		t.Errorf("oauth", "is only used with credentials = %q; set that or remove the table", credentialsOAuth)
	}
	if hasCommand {
		for _, k := range []string{"headers", "credentials"} {
			if t.Has(k) {
				t.Errorf(k, "applies to url servers only; a command server gets its settings through env and env_pass")
			}
		}
	}
	if hasURL {
		for _, k := range []string{"env", "env_pass", "dir"} {
			if t.Has(k) {
				t.Errorf(k, "applies to command servers only; a url server gets its settings through headers and credentials")
			}
		}
	}
	return d
}

// config completes the decoded config with what is known at Build time: the
// passed-through variables, the bearer token, the host's HTTP client and
// stderr, and the stack's consent handler.
func (d *mcpDriver) config(ctx context.Context, b *Builder) (mcp.Config, error) {
	cfg := d.cfg
	cfg.Env = slices.Clone(cfg.Env)
	for _, k := range d.envPass {
		v, ok := os.LookupEnv(k)
		if !ok {
			return cfg, fmt.Errorf("env_pass names %s, which is not set; set it in the environment or remove it from env_pass", k)
		}
		cfg.Env = append(cfg.Env, k+"="+v)
	}
	if d.bearer {
		name := auth.EnvVarName(d.label)
		token := strings.TrimSpace(os.Getenv(name))
		if token == "" {
			return cfg, fmt.Errorf("credentials = \"env\", but %s is empty; set it to the server's access token", name)
		}
		cfg.Headers = maps.Clone(cfg.Headers)
		if cfg.Headers == nil {
			cfg.Headers = map[string]string{}
		}
		cfg.Headers["Authorization"] = "Bearer " + token
	}
	if d.creds != nil {
		p, err := b.stack.provider(ctx, d.creds)
		if err != nil {
			return cfg, err
		}
		cfg.OAuth = p.(*mcp.OAuthHandler)
	}
	h := b.Host()
	cfg.HTTPClient = h.HTTPClient
	if h.Stderr != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(h.Stderr, nil)).With("driver", "mcp", "label", d.label)
	}
	if b.consent != nil {
		cfg.Consent = b.consent
	}
	if d.sampling {
		if h.Sampling == nil {
			if cfg.Logger != nil {
				cfg.Logger.Warn("sampling = true, but this program has no model to answer with; the server's sampling requests are declined")
			}
		} else {
			cfg.Sampling = h.Sampling
			cfg.Consent = samplingConsent(b.consent, h.Consent)
		}
	}
	return cfg, nil
}

func (d *mcpDriver) ToolDriver(ctx context.Context, b *Builder) (mcs.ToolDriver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	td, err := mcp.NewToolDriver(ctx, cfg)
	return td, d.signInHint(err)
}

// signInHint adds to a connection that needs a sign-in how to sign in ahead of
// time: the link of the challenge works only while this program runs.
func (d *mcpDriver) signInHint(err error) error {
	if _, ok := errors.AsType[*auth.Challenge](err); ok {
		return fmt.Errorf("%w (or sign in ahead of time with: mcs auth login %s)", err, d.label)
	}
	return err
}

func (d *mcpDriver) Driver(ctx context.Context, b *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	cfg, err := d.config(ctx, b)
	if err != nil {
		return nil, err
	}
	drv, err := mcp.New(ctx, cfg, opts...)
	return drv, d.signInHint(err)
}

// samplingConsent routes the questions of an MCP server: sampling requests to
// the permission middleware's handler, else to the host's; elicitation only to
// the middleware's (declined without it, as when no handler is set).
func samplingConsent(middleware, host mcp.ConsentFunc) mcp.ConsentFunc {
	sample := middleware
	if sample == nil {
		sample = host
	}
	return func(ctx context.Context, name string, args map[string]any) (bool, error) {
		ask := middleware
		if _, elicitation := args["elicitation"]; !elicitation && name == "sampling" {
			ask = sample
		}
		if ask == nil {
			return false, nil
		}
		return ask(ctx, name, args)
	}
}

package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults applied to the zero values of [Config].
const (
	// DefaultCallTimeout bounds one tool call.
	DefaultCallTimeout = 60 * time.Second
	// DefaultConnectTimeout bounds the start of the server and the handshake when
	// the context given to NewToolDriver has no deadline of its own.
	DefaultConnectTimeout = 30 * time.Second
	// MaxResultBytes is the largest text a call returns to the model; longer text
	// is cut on a UTF-8 boundary and marked.
	MaxResultBytes = 1 << 20
	// DefaultMaxMessageBytes bounds one message of the server: a line of a
	// stdio server, an SSE event or a JSON body of an HTTP server (16 MiB, the
	// SDK's bound of a stdio line).
	DefaultMaxMessageBytes = 16 << 20
	// DefaultMaxTools bounds the tools of one listing, over all its pages.
	DefaultMaxTools = 10000
	// MaxStderrBytes is how much of a stdio server's standard error the driver
	// keeps (the last bytes written) to show in errors and health details.
	MaxStderrBytes = 4 << 10
)

// ConsentFunc decides whether a request of the server may be answered. It has the
// signature of the permission middleware's ConsentFunc, so the handler given to
// permission.New can be given here too. true allows, false declines; an error
// means no decision could be had.
type ConsentFunc = func(ctx context.Context, name string, args map[string]any) (bool, error)

// Config is the plain-data configuration of an MCP driver. Exactly one of
// Transport, Command and URL selects the server (Transport wins when several are
// set). The driver copies the Config at construction; HTTPClient, Transport and
// the functions are kept by reference.
type Config struct {
	// Command starts a stdio server: the program and its arguments, such as
	// {"npx", "-y", "@modelcontextprotocol/server-everything"}. The program is
	// looked up in PATH. Its standard error is kept (the last MaxStderrBytes) and
	// shown in errors. The child runs in its own process group, which Close ends.
	Command []string
	// Env holds extra KEY=VALUE entries for the child. The child does not inherit
	// the whole environment of this process, which may hold credentials meant for
	// other systems: it gets PATH, HOME, USER, LOGNAME, SHELL, TERM, TMPDIR, LANG,
	// the LC_ variables (and on Windows the variables a program needs to start),
	// followed by Env, so an entry of Env wins.
	Env []string
	// Dir is the working directory of the child; empty means the current one.
	Dir string
	// URL is a streamable HTTP endpoint (http or https).
	URL string
	// Headers are sent with every HTTP request to URL, such as an
	// Authorization header, and only to URL's origin (scheme, host and port).
	// They are never shown in errors.
	Headers map[string]string
	// HTTPClient sends the HTTP requests; nil means http.DefaultClient. The
	// driver uses a copy whose transport adds Headers and bounds what the
	// server sends, and which follows a redirect only within URL's origin: a
	// redirect elsewhere (another host or port, https to http) fails the
	// request with [ErrRedirect], before anything is sent there. The client
	// given is never modified; its own CheckRedirect still applies. A Timeout
	// on it also ends the long-lived event stream the server uses for
	// notifications, so leave it zero and rely on CallTimeout.
	HTTPClient *http.Client
	// OAuth, when set, signs in to a URL server that requires OAuth (it
	// answers 401 with protected-resource metadata): see [OAuthHandler]. The
	// handler is kept by reference; several drivers may share it.
	OAuth *OAuthHandler
	// Transport is any transport of the MCP SDK, such as one of
	// mcpsdk.NewInMemoryTransports in tests. It wins over Command and URL. After
	// the session ends the driver connects it again, which only transports that
	// can connect more than once support.
	Transport mcpsdk.Transport
	// CallTimeout bounds each tool call; zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxMessageBytes bounds one message of the server: a line of a stdio
	// server, an SSE event or a JSON body of an HTTP server. Zero means
	// DefaultMaxMessageBytes. A larger message fails the call or listing with
	// [ErrServerLimit] while it is read, and ends the session (the next call
	// connects again). It does not apply to a Transport given here.
	MaxMessageBytes int
	// MaxTools bounds the tools of one listing, over all its pages; zero means
	// DefaultMaxTools. Over HTTP and stdio the tools of a page are counted
	// while it is read, so a longer listing is refused with [ErrServerLimit]
	// before it is decoded.
	MaxTools int
	// Consent answers the server's elicitation requests (the server asks the
	// user for input during a call). The request is presented as a call of the
	// tool that is running (or "elicitation" when none is known) whose arguments
	// hold the server's message and the requested fields; true accepts the
	// request with the defaults the server declared, false declines it, an error
	// cancels it. A request with a required field that has no default cannot be
	// answered by a yes or no and is declined without asking. Set it to the same
	// handler given to permission.New, so the person who consents to tool calls
	// also answers the server. Nil declines every elicitation.
	Consent ConsentFunc
	// Elicit, when set, answers elicitation requests instead of Consent, with
	// full control over the result.
	Elicit func(ctx context.Context, req *mcpsdk.ElicitRequest) (*mcpsdk.ElicitResult, error)
	// Logger receives warnings (a tool whose schema cannot be represented, a
	// declined elicitation, a lost session); nil means slog.Default().
	Logger *slog.Logger

	// Resources, when true and the server declares resources, adds the tools
	// resources__list (the server's resources and resource templates) and
	// resources__read (one resource by URI: text as it is, blobs described by
	// type and size). The driver's ListResources, ReadResource and Subscribe
	// work without it.
	Resources bool
	// Prompts, when true and the server lists prompts, adds the tool
	// prompts__get, whose description lists the prompts and their arguments and
	// whose result is the prompt's messages as text. ListPrompts and GetPrompt
	// work without it. A prompt listing that breaks a limit leaves prompts__get
	// out for the life of the driver (listing again would break it again).
	Prompts bool
	// MaxResources bounds the resources, the resource templates and the prompts
	// of one listing, each over all its pages; zero means DefaultMaxResources.
	MaxResources int
	// Sampling answers the server's sampling requests (sampling/createMessage:
	// the server asks the client's model for a completion). Each request is
	// first shown in full to Consent (as a call of "sampling" whose arguments
	// hold the server, the system prompt and every message); a request Consent
	// declines, or any request when Consent is nil, is declined. Nil: the driver
	// does not offer sampling and servers' requests are refused.
	Sampling SamplingFunc
	// MaxSamplingRequests bounds the sampling requests of one session, asked
	// or not; zero means DefaultMaxSamplingRequests. Later ones are declined.
	MaxSamplingRequests int
	// MaxSamplingTokens bounds the tokens (input and output) the sampling
	// requests of one session use; zero means DefaultMaxSamplingTokens. A
	// request's MaxTokens is lowered to what is left; once none is, requests
	// are declined.
	MaxSamplingTokens int
	// Roots are the directories the server is told about when it asks
	// (roots/list): paths, made absolute, or file: URIs. Nothing else of the
	// host is revealed; nil answers an empty list.
	Roots []string
}

// ErrInvalidConfig is wrapped by the error of NewToolDriver and New when the
// Config selects no server or a malformed one.
var ErrInvalidConfig = errors.New("invalid MCP driver config")

// ErrClosed is wrapped by the error of a call made after Close.
var ErrClosed = errors.New("MCP driver closed")

// ConnectError is the error of a server that could not be started or did not
// complete the handshake. It names the server (the command or the URL); Stderr
// holds the end of a stdio server's standard error.
type ConnectError struct {
	Server string // `command "npx -y pkg"`, `URL https://host/mcp` or "transport"
	Err    error
	Stderr string
}

// Error names the server, says what failed and shows the end of its stderr.
func (e *ConnectError) Error() string {
	msg := fmt.Sprintf("connect to MCP server %s: %v", e.Server, e.Err)
	if e.Stderr != "" {
		msg += "; stderr (end): " + e.Stderr
	}
	return msg
}

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }

// ToolError is the error of a call the server reported as failed (isError:
// true). Text is the server's message to the model.
type ToolError struct {
	Tool string
	Text string
}

// Error names the tool and carries the server's text.
func (e *ToolError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("MCP tool %q failed without a message", e.Tool)
	}
	return fmt.Sprintf("MCP tool %q failed: %s", e.Tool, e.Text)
}

// normalize checks cfg and fills defaults.
func normalize(cfg Config) (Config, string, error) {
	c := cfg
	c.Command = append([]string(nil), cfg.Command...)
	c.Env = append([]string(nil), cfg.Env...)
	if cfg.Headers != nil {
		c.Headers = make(map[string]string, len(cfg.Headers))
		for k, v := range cfg.Headers {
			c.Headers[k] = v
		}
	}
	if c.CallTimeout < 0 {
		return c, "", fmt.Errorf("%w: CallTimeout is negative (%v); use 0 for the default of %v", ErrInvalidConfig, c.CallTimeout, DefaultCallTimeout)
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.MaxMessageBytes < 0 || c.MaxTools < 0 {
		return c, "", fmt.Errorf("%w: MaxMessageBytes (%d) and MaxTools (%d) must not be negative; use 0 for the defaults of %d and %d", ErrInvalidConfig, c.MaxMessageBytes, c.MaxTools, DefaultMaxMessageBytes, DefaultMaxTools)
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxTools == 0 {
		c.MaxTools = DefaultMaxTools
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxResources < 0 || c.MaxSamplingRequests < 0 || c.MaxSamplingTokens < 0 {
		return c, "", fmt.Errorf("%w: MaxResources, MaxSamplingRequests and MaxSamplingTokens must not be negative; use 0 for the defaults", ErrInvalidConfig)
	}
	c.MaxResources = cmp.Or(c.MaxResources, DefaultMaxResources)
	c.MaxSamplingRequests = cmp.Or(c.MaxSamplingRequests, DefaultMaxSamplingRequests)
	c.MaxSamplingTokens = cmp.Or(c.MaxSamplingTokens, DefaultMaxSamplingTokens)
	var err error
	if c.Roots, err = normalizeRoots(cfg.Roots); err != nil {
		return c, "", err
	}
	for _, kv := range c.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return c, "", fmt.Errorf("%w: Env entry %q is not KEY=VALUE", ErrInvalidConfig, kv)
		}
	}
	for k := range c.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return c, "", fmt.Errorf("%w: header name %q is not a valid HTTP header name", ErrInvalidConfig, k)
		}
	}
	switch {
	case c.Transport != nil:
		return c, "transport", nil
	case len(c.Command) > 0:
		if strings.TrimSpace(c.Command[0]) == "" {
			return c, "", fmt.Errorf("%w: Command[0] (the program) is empty", ErrInvalidConfig)
		}
		return c, "command " + quoteCommand(c.Command), nil
	case c.URL != "":
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, "", fmt.Errorf("%w: URL %q is not an absolute http or https URL", ErrInvalidConfig, redactURL(c.URL))
		}
		return c, "URL " + redactURL(c.URL), nil
	default:
		return c, "", fmt.Errorf("%w: set Command (a stdio server), URL (streamable HTTP) or Transport", ErrInvalidConfig)
	}
}

// quoteCommand renders a command line for messages.
func quoteCommand(cmd []string) string {
	return fmt.Sprintf("%q", strings.Join(cmd, " "))
}

// redactURL drops user info and the query, which may hold credentials.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "..."
	}
	u.Fragment = ""
	return u.String()
}

// childEnv is the environment of a stdio server: the inherited variables of
// environ, then extra.
func childEnv(environ, extra []string) []string {
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "LC_") || slices.ContainsFunc(inheritedEnv, func(s string) bool { return strings.EqualFold(s, k) }) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// inheritedEnv names the variables a stdio server inherits.
var inheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "LANG",
	// Windows
	"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATHEXT", "PROCESSOR_ARCHITECTURE",
	"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "COMSPEC",
}

func newCommand(cfg Config) *exec.Cmd {
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Dir = cfg.Dir
	cmd.Env = childEnv(os.Environ(), cfg.Env)
	return cmd
}

package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/outcap"
	"github.com/mcs-go/mcs/tools"
)

const version = "0.1.0"

// Defaults of the zero fields of [Config].
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxTimeout     = 5 * time.Minute
	DefaultMaxOutputBytes = 64 << 10
)

// killGrace is how long a timed-out command has to end after the signal,
// before its session is closed.
const killGrace = 2 * time.Second

// Config configures the ssh driver, which runs commands on one host. It is
// plain data.
type Config struct {
	Conn
	// Timeout is the wall-clock limit of a command; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxTimeout caps the timeout the model may ask for; zero means
	// DefaultMaxTimeout.
	MaxTimeout time.Duration
	// MaxOutputBytes is kept of each of stdout and stderr, the first and the last
	// half; zero means DefaultMaxOutputBytes.
	MaxOutputBytes int
}

// ToolDriver is the technical half of the ssh driver: it publishes run_command,
// which runs a program with its arguments on the host. It is safe for
// concurrent use: each command has a session of its own on one connection,
// dialled on first use and again after it breaks.
type ToolDriver struct {
	*tools.Table
	cfg    Config
	client *client
}

var (
	_ mcs.ToolDriver  = (*ToolDriver)(nil)
	_ mcs.ToolLookup  = (*ToolDriver)(nil)
	_ mcs.ToolDefiner = (*ToolDriver)(nil)
)

// NewToolDriver checks cfg and returns the driver; it does not connect. It
// fails when Addr, User, KnownHosts or the credential is missing, when the
// known_hosts file or the key cannot be read, or when a limit is out of range.
func NewToolDriver(cfg Config) (*ToolDriver, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTimeout == 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	switch {
	case cfg.Timeout < 0 || cfg.Timeout > cfg.MaxTimeout:
		return nil, fmt.Errorf("ssh: Timeout %v must be positive and at most MaxTimeout %v", cfg.Timeout, cfg.MaxTimeout)
	case cfg.MaxOutputBytes < 256:
		return nil, fmt.Errorf("ssh: MaxOutputBytes is %d; set at least 256, or 0 for the default of %d", cfg.MaxOutputBytes, DefaultMaxOutputBytes)
	}
	cl, err := newClient(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	d := &ToolDriver{cfg: cfg, client: cl}
	d.Table = tools.New(mcs.Meta{
		ID:       "mcs-go/ssh",
		Name:     "SSH",
		Version:  version,
		Bindings: []mcs.Binding{{Capability: "remote-shell", Adapter: "ssh", SpecFormat: "builtin"}},
	})
	tools.Add(d.Table, "run_command",
		fmt.Sprintf("Run a program with its arguments on the remote host %s as %s. argv is the program and its arguments, each passed as is: no shell "+
			"interprets them (for pipes or redirections, run [\"sh\", \"-c\", \"...\"]). The program is ended after %v (timeout_seconds may ask for up to %v). "+
			"Returns exit_code, stdout and stderr (each cut to %d bytes, keeping the start and the end), timed_out and truncated.",
			cfg.Addr, cfg.User, cfg.Timeout, cfg.MaxTimeout, cfg.MaxOutputBytes),
		d.runCommand, tools.WithTitle("Run a remote command"),
		tools.WithAnnotations(mcs.ToolAnnotations{Destructive: true, OpenWorld: true}))
	return d, nil
}

// ExecuteTool runs the named tool. A command that fails, is killed or times out
// is a result; the call fails for an unknown tool, invalid arguments, a host
// that cannot be reached or logged in to (a *HostKeyError when its key is not
// the pinned one) and a done ctx, which also ends the remote command. Errors
// begin with the tool name.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	res, err := d.Table.ExecuteTool(ctx, name, args)
	var argErr *mcs.ArgumentsError
	if err != nil && !errors.Is(err, mcs.ErrUnknownTool) && !errors.As(err, &argErr) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, err
}

// Close closes the connection. Calls after Close fail.
func (d *ToolDriver) Close() error { return d.client.close() }

// Driver is the complete ssh driver: the [ToolDriver] with the LLM-facing half
// of [mcs.BaseDriver]. It is safe for concurrent use.
type Driver struct {
	*mcs.BaseDriver
	tools *ToolDriver
}

var _ mcs.Driver = (*Driver)(nil)

// New returns a Driver over a new ToolDriver for cfg, configured by opts. It
// fails as NewToolDriver does.
func New(cfg Config, opts ...mcs.Option) (*Driver, error) {
	td, err := NewToolDriver(cfg)
	if err != nil {
		return nil, err
	}
	return &Driver{BaseDriver: mcs.NewBaseDriver(td, opts...), tools: td}, nil
}

// Close closes the connection.
func (d *Driver) Close() error { return d.tools.Close() }

type runCommandArgs struct {
	Argv           []string `json:"argv" description:"The program and its arguments, such as [\"ls\", \"-la\", \"/srv\"]; each is passed as is."`
	TimeoutSeconds float64  `json:"timeout_seconds,omitempty" description:"Wall-clock limit in seconds; the program is ended when it is reached."`
	Stdin          *string  `json:"stdin,omitempty" description:"Text given to the program on its standard input (default: none, end of file)."`
}

type runResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out"`
	Truncated bool   `json:"truncated"`
	Notice    string `json:"notice,omitempty"`
}

// Quote returns argv as one command line for a POSIX shell (sh, bash, dash,
// zsh, ksh), which is how an SSH server runs a command: every argument in
// single quotes, a single quote written '\”. The shell gives the program
// exactly argv, whatever the arguments hold (;, $(), backticks, newlines,
// globs). It fails for an empty argv, an empty program and a NUL byte, which
// no argument can hold.
func Quote(argv []string) (string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return "", errors.New("argv is empty; give the program and its arguments, such as [\"ls\", \"-la\"]")
	}
	var b strings.Builder
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return "", fmt.Errorf("argument %d holds a NUL byte, which no program argument can contain; remove it", i)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String(), nil
}

func (d *ToolDriver) runCommand(ctx context.Context, args runCommandArgs) (*runResult, error) {
	quoted, err := Quote(args.Argv)
	if err != nil {
		return nil, err
	}
	// The shell reports its process ID, which an SSH server makes the command's
	// process group, then becomes the program.
	line := pidPrefix + quoted
	timeout, notice := d.cfg.Timeout, ""
	switch s := args.TimeoutSeconds; {
	case s == 0:
	case s < 0 || math.IsNaN(s) || math.IsInf(s, 0):
		return nil, fmt.Errorf("timeout_seconds %v is not a positive number of seconds; omit it for the default of %v", s, d.cfg.Timeout)
	case s > d.cfg.MaxTimeout.Seconds():
		timeout = d.cfg.MaxTimeout
		notice = fmt.Sprintf("the timeout asked for, %v s, is above the limit; %v was used", s, d.cfg.MaxTimeout)
	default:
		timeout = time.Duration(s * float64(time.Second))
	}
	c, err := d.client.get(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := c.NewSession()
	if err != nil {
		// The connection broke: dial again, once.
		d.client.drop(c)
		if c, err = d.client.get(ctx); err != nil {
			return nil, err
		}
		if sess, err = c.NewSession(); err != nil {
			d.client.drop(c)
			return nil, fmt.Errorf("open a session: %w", err)
		}
	}
	defer sess.Close()
	stdout := &outcap.Buffer{Max: d.cfg.MaxOutputBytes}
	stderr := &outcap.Buffer{Max: d.cfg.MaxOutputBytes}
	pid := &pidSniffer{w: stderr}
	sess.Stdout, sess.Stderr = stdout, pid
	if args.Stdin != nil {
		sess.Stdin = strings.NewReader(*args.Stdin)
	}
	if err := sess.Start(line); err != nil {
		return nil, fmt.Errorf("start the command: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	timedOut := false
	select {
	case waitErr = <-done:
	case <-timer.C:
		timedOut = true
		d.end(c, sess, pid.get(), done)
	case <-ctx.Done():
		d.end(c, sess, pid.get(), done)
		return nil, context.Cause(ctx)
	}
	pid.flush()
	res := &runResult{Stdout: stdout.String(), Stderr: stderr.String(), TimedOut: timedOut, Truncated: stdout.Truncated() || stderr.Truncated()}
	var exitErr *gossh.ExitError
	var missing *gossh.ExitMissingError
	switch {
	case timedOut:
		res.ExitCode = -1
		res.Notice = fmt.Sprintf("the command ran longer than %v and was ended (SIGKILL, then the session was closed)", timeout)
	case waitErr == nil:
	case errors.As(waitErr, &exitErr):
		res.ExitCode = exitErr.ExitStatus()
		if sig := exitErr.Signal(); sig != "" {
			res.ExitCode = -1
			res.Notice = "the command was killed by signal " + sig
		}
	case errors.As(waitErr, &missing):
		res.ExitCode = -1
		res.Notice = "the server reported no exit status"
	default:
		return nil, fmt.Errorf("run the command: %w", waitErr)
	}
	if notice != "" {
		res.Notice = strings.TrimPrefix(res.Notice+"; "+notice, "; ")
	}
	if res.Truncated {
		res.Notice = strings.TrimPrefix(res.Notice+"; the output was longer than the limit: its start and its end are shown", "; ")
	}
	return res, nil
}

// pidPrefix makes the remote shell write its process ID on stderr before it
// runs the program in its place.
const pidPrefix = `printf 'mcs-pid:%s\n' "$$" >&2; exec `

// pidSniffer takes the line of pidPrefix out of stderr and passes the rest
// on. Login scripts may write before it; the line is looked for in the first
// 4 KiB.
type pidSniffer struct {
	w io.Writer

	mu   sync.Mutex
	head []byte // stderr not yet passed on, while the line is looked for
	pid  int
	done bool
}

func (p *pidSniffer) Write(b []byte) (int, error) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return p.w.Write(b)
	}
	p.head = append(p.head, b...)
	var out []byte
	for {
		i := bytes.IndexByte(p.head, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSuffix(string(p.head[:i]), "\r")
		if n, err := strconv.Atoi(strings.TrimPrefix(line, "mcs-pid:")); err == nil && strings.HasPrefix(line, "mcs-pid:") && n > 1 {
			p.pid, p.done = n, true
			out = append(out, p.head[i+1:]...)
			p.head = nil
			break
		}
		out = append(out, p.head[:i+1]...)
		p.head = p.head[i+1:]
	}
	if !p.done && len(out)+len(p.head) > 4096 {
		p.done = true
		out = append(out, p.head...)
		p.head = nil
	}
	p.mu.Unlock()
	if len(out) > 0 {
		p.w.Write(out)
	}
	return len(b), nil
}

// flush passes on what is held back.
func (p *pidSniffer) flush() {
	p.mu.Lock()
	rest := p.head
	p.head, p.done = nil, true
	p.mu.Unlock()
	if len(rest) > 0 {
		p.w.Write(rest)
	}
}

// get returns the remote process ID, or 0 when it is not known.
func (p *pidSniffer) get() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pid
}

// end ends a running command and every process of its group: SIGKILL by the
// session's signal request (OpenSSH signals the process group, except to a
// root login), then by kill in a second session when the process ID is known,
// then the session is closed. It waits, a grace period at most, for the
// command to end.
func (d *ToolDriver) end(c *gossh.Client, sess *gossh.Session, pid int, done <-chan error) {
	sess.Signal(gossh.SIGKILL)
	if pid > 1 {
		if k, err := c.NewSession(); err == nil {
			k.Run(fmt.Sprintf("kill -s KILL -- -%d 2>/dev/null || kill -s KILL %d 2>/dev/null", pid, pid))
			k.Close()
		}
	}
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	sess.Close()
	t.Reset(killGrace)
	select {
	case <-done:
	case <-t.C:
		// The server keeps the channel while the command's pipes are open; the
		// waiting goroutine ends with the channel.
	}
}

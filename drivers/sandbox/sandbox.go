package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/confine"
	"github.com/mcs-go/mcs/tools"
)

const version = "0.1.0"

// Defaults of the zero fields of [Config].
const (
	DefaultBackend        = "bwrap"
	DefaultTimeout        = 30 * time.Second
	DefaultMaxTimeout     = 5 * time.Minute
	DefaultMaxOutputBytes = 64 << 10
	DefaultMemory         = 512 << 20
	DefaultCPU            = 60 * time.Second
	DefaultMaxProcesses   = 64
	DefaultMaxDiskBytes   = 1 << 30
)

// Fixed limits of every command, beside those of [Config].
const (
	// MaxFileSize is the largest file a command may write (RLIMIT_FSIZE), or
	// Config.MaxDiskBytes when that is less.
	MaxFileSize = 1 << 30
	// MaxOpenFiles is the number of files a process may hold open (RLIMIT_NOFILE).
	MaxOpenFiles = 256
	// TmpSize is the size of the private /tmp of a command, a memory file system.
	TmpSize = 64 << 20
)

// The environment a command sees when Config.Env does not set these.
const (
	defaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
	defaultHome = "/workspace"
	defaultLang = "C.UTF-8"
)

// Config configures a sandbox driver. It is plain data.
type Config struct {
	// Backend runs the commands: "bwrap" (bubblewrap, the default), "runsc"
	// (gVisor) or "docker" (a Docker Engine).
	Backend string
	// Workspace is the host directory a command sees at /workspace: the only
	// place it may write besides its private /tmp. It must exist, be a directory
	// and not a symbolic link. Required.
	Workspace string
	// Network gives a command the host's network. By default it has none: only a
	// loopback interface of its own.
	Network bool
	// Timeout is the wall-clock limit of a command; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxTimeout caps the timeout the model may ask for; zero means
	// DefaultMaxTimeout.
	MaxTimeout time.Duration
	// MaxOutputBytes is kept of each of stdout and stderr, the first and the last
	// half; zero means DefaultMaxOutputBytes.
	MaxOutputBytes int
	// Memory is the address space of each process, in bytes; zero means
	// DefaultMemory.
	Memory int64
	// CPU is the CPU time of each process; zero means DefaultCPU.
	CPU time.Duration
	// MaxProcesses is the number of processes a command may run at once; zero
	// means DefaultMaxProcesses.
	MaxProcesses int
	// MaxDiskBytes bounds how much a command may add to the file system that
	// holds the workspace, in bytes; zero means DefaultMaxDiskBytes, and it must
	// be at least 1 MiB. The
	// workspace is a directory of the host, so neither the private /tmp nor
	// RLIMIT_FSIZE (which caps each file, not their number) keeps a command from
	// filling the host's disk. While a command runs, a watchdog reads the free
	// space of that file system (statfs(2)) and kills the command with every
	// process it started, as the timeout does, when the free space has fallen by
	// more than MaxDiskBytes since it started, or would fall below a floor that
	// is never crossed: 5% of the file system's size, at most 1 GiB. The result
	// then has disk_limit_exceeded and a notice. The watchdog reads more often as
	// the command nears its budget (every 100 ms far from it, every 2 ms near
	// it), so that a command writing at up to 4 GiB/s cannot cross it between two
	// readings; a faster one overshoots by at most its speed times the interval.
	// Each file is also capped by RLIMIT_FSIZE at the lesser of MaxFileSize and
	// MaxDiskBytes. The fall is that of the whole file system: what other
	// programs, or other commands running at the same time, write counts
	// against the command, and what it deletes makes room. write_file refuses
	// content longer than MaxDiskBytes, or that would leave less than the floor
	// free. The file-system quotas and a size-limited copy of the workspace were
	// weighed and not chosen: quotas need tools and mount options most hosts do
	// not have, bubblewrap 0.8 has no overlay mounts, and a copy would change
	// what a command sees of the workspace. See docs/sandbox.md.
	MaxDiskBytes int64
	// Env is the environment of a command, beside PATH, HOME (/workspace) and
	// LANG (C.UTF-8), which it may override. Nothing of the host's environment
	// is passed.
	Env map[string]string
	// Image is the container image of the docker backend.
	Image string
}

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// normalize fills the defaults of cfg and checks it.
func (cfg Config) normalize() (Config, error) {
	if cfg.Backend == "" {
		cfg.Backend = DefaultBackend
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTimeout == 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.MaxOutputBytes == 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.CPU == 0 {
		cfg.CPU = DefaultCPU
	}
	if cfg.MaxProcesses == 0 {
		cfg.MaxProcesses = DefaultMaxProcesses
	}
	if cfg.MaxDiskBytes == 0 {
		cfg.MaxDiskBytes = DefaultMaxDiskBytes
	}
	switch {
	case cfg.Timeout < 0 || cfg.MaxTimeout < 0:
		return cfg, errors.New("sandbox: Timeout and MaxTimeout must be positive")
	case cfg.Timeout > cfg.MaxTimeout:
		return cfg, fmt.Errorf("sandbox: Timeout %v is longer than MaxTimeout %v; raise MaxTimeout or lower Timeout", cfg.Timeout, cfg.MaxTimeout)
	case cfg.MaxOutputBytes < 256:
		return cfg, fmt.Errorf("sandbox: MaxOutputBytes is %d; set at least 256, or 0 for the default of %d", cfg.MaxOutputBytes, DefaultMaxOutputBytes)
	case cfg.Memory < 16<<20:
		return cfg, fmt.Errorf("sandbox: Memory is %d bytes; set at least 16 MiB, or 0 for the default of %d", cfg.Memory, DefaultMemory)
	case cfg.CPU < time.Second:
		return cfg, fmt.Errorf("sandbox: CPU is %v; set at least 1s, or 0 for the default of %v", cfg.CPU, DefaultCPU)
	case cfg.MaxDiskBytes < 1<<20:
		return cfg, fmt.Errorf("sandbox: MaxDiskBytes is %d; set at least 1 MiB, or 0 for the default of %d", cfg.MaxDiskBytes, DefaultMaxDiskBytes)
	case cfg.MaxProcesses < 2:
		return cfg, fmt.Errorf("sandbox: MaxProcesses is %d; set at least 2 (the shell and one command), or 0 for the default of %d", cfg.MaxProcesses, DefaultMaxProcesses)
	}
	for k, v := range cfg.Env {
		if !envName.MatchString(k) {
			return cfg, fmt.Errorf("sandbox: Env name %q is not a valid variable name (letters, digits and _, not starting with a digit)", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return cfg, fmt.Errorf("sandbox: Env %s holds a NUL byte", k)
		}
	}
	if cfg.Workspace == "" {
		return cfg, errors.New("sandbox: Workspace is not set; set it to the host directory commands may write to")
	}
	abs, err := filepath.Abs(cfg.Workspace)
	if err != nil {
		return cfg, fmt.Errorf("sandbox: workspace %q: %w", cfg.Workspace, err)
	}
	fi, err := os.Lstat(abs)
	switch {
	case err != nil:
		return cfg, fmt.Errorf("sandbox: workspace %q: %w", cfg.Workspace, err)
	case fi.Mode()&os.ModeSymlink != 0:
		return cfg, fmt.Errorf("sandbox: workspace %q is a symbolic link; give the directory it leads to", cfg.Workspace)
	case !fi.IsDir():
		return cfg, fmt.Errorf("sandbox: workspace %q is not a directory", cfg.Workspace)
	}
	cfg.Workspace = abs
	return cfg, nil
}

// environ is the whole environment of a command, sorted.
func (cfg Config) environ() []string {
	env := map[string]string{"PATH": defaultPath, "HOME": defaultHome, "LANG": defaultLang}
	maps.Copy(env, cfg.Env)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// fileSizeLimit is RLIMIT_FSIZE of every process of a command.
func (cfg Config) fileSizeLimit() int64 { return min(MaxFileSize, cfg.MaxDiskBytes) }

// request is one command to run.
type request struct {
	command string
	stdin   string
	timeout time.Duration
	// abort, when closed, kills the command with all its processes, as the
	// timeout does; the result then has exit code -1.
	abort <-chan struct{}
}

// runResult is the result of run_command.
type runResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out"`
	Truncated bool   `json:"truncated"`
	Notice    string `json:"notice,omitempty"`
	// DiskLimitExceeded reports a command stopped for adding more than
	// Config.MaxDiskBytes to the workspace's file system.
	DiskLimitExceeded bool `json:"disk_limit_exceeded,omitempty"`
}

// backend runs commands in isolation. Implementations are safe for concurrent
// use.
type backend interface {
	// run runs req and returns its result; a command that fails, is killed or
	// times out is a result. The error is for a backend that cannot run it.
	run(ctx context.Context, req request) (*runResult, error)
	// owner is the host user and group files written by the file tools are given
	// to, or -1, -1 to leave them to the driver's user.
	owner() (uid, gid int)
	close() error
}

// ToolDriver is the technical half of the sandbox driver: it runs commands in
// the sandbox and reads and writes the files of the workspace. It is safe for
// concurrent use; every command runs in a sandbox of its own.
//
// It publishes, in this order, run_command, write_file, read_file and
// list_files. Its Meta has ID "mcs-go/sandbox" and binding {sandbox, <backend>,
// builtin}.
type ToolDriver struct {
	*toolTable
	cfg  Config
	be   backend
	root *confine.Root
}

type toolTable = tools.Table

var (
	_ mcs.ToolDriver  = (*ToolDriver)(nil)
	_ mcs.ToolLookup  = (*ToolDriver)(nil)
	_ mcs.ToolDefiner = (*ToolDriver)(nil)
)

// NewToolDriver checks cfg, finds the backend and tries it once. It fails with
// an error that says what to do when the configuration is wrong, when the
// workspace is missing, a file or a symbolic link, when the backend is not
// installed (naming the package to install) or cannot isolate a command on this
// machine.
func NewToolDriver(cfg Config) (*ToolDriver, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	var be backend
	switch cfg.Backend {
	case "bwrap":
		be, err = newBwrap(cfg)
	case "runsc":
		be, err = newRunsc(cfg)
	case "docker":
		be, err = newDocker(cfg)
	default:
		return nil, fmt.Errorf("sandbox: backend %q is unknown; use \"bwrap\", \"runsc\" or \"docker\"", cfg.Backend)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	root, err := confine.Open(cfg.Workspace)
	if err != nil {
		be.close()
		return nil, fmt.Errorf("sandbox: workspace: %w", err)
	}
	d := &ToolDriver{cfg: cfg, be: be, root: root}
	d.toolTable = tools.New(mcs.Meta{
		ID:       "mcs-go/sandbox",
		Name:     "Sandbox",
		Version:  version,
		Bindings: []mcs.Binding{{Capability: "sandbox", Adapter: cfg.Backend, SpecFormat: "builtin"}},
	})
	d.addTools()
	return d, nil
}

// ExecuteTool runs the named tool. A command that fails, is killed or times out
// is a result ({exit_code, stdout, stderr, timed_out, truncated}); so are a
// missing file and a directory where a file was expected. The call fails for an
// unknown tool, invalid arguments, a path refused by the confinement (the error
// wraps a *confine.Error), a backend that cannot run the command, and a done
// ctx, which also kills a running command with all its processes. Errors begin
// with the tool name.
func (d *ToolDriver) ExecuteTool(ctx context.Context, name string, args map[string]any) (any, error) {
	res, err := d.toolTable.ExecuteTool(ctx, name, args)
	var argErr *mcs.ArgumentsError
	if err != nil && !errors.Is(err, mcs.ErrUnknownTool) && !errors.As(err, &argErr) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return res, err
}

// Close releases the workspace and the backend. Calls after Close fail.
func (d *ToolDriver) Close() error {
	return errors.Join(d.root.Close(), d.be.close())
}

// Driver is the complete sandbox driver: the [ToolDriver] with the LLM-facing
// half of [mcs.BaseDriver]. It is safe for concurrent use.
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

// Close releases the workspace and the backend.
func (d *Driver) Close() error { return d.tools.Close() }

// timeoutFor is the timeout of a call that asks for seconds (0: not asked), and
// a notice when it was clamped.
func (d *ToolDriver) timeoutFor(seconds float64) (time.Duration, string, error) {
	switch {
	case seconds == 0:
		return d.cfg.Timeout, "", nil
	case seconds < 0 || math.IsNaN(seconds) || math.IsInf(seconds, 0):
		return 0, "", fmt.Errorf("timeout_seconds %v is not a positive number of seconds; omit it for the default of %v", seconds, d.cfg.Timeout)
	case seconds > d.cfg.MaxTimeout.Seconds():
		return d.cfg.MaxTimeout, fmt.Sprintf("the timeout asked for, %v s, is above the limit; %v was used", seconds, d.cfg.MaxTimeout), nil
	}
	return time.Duration(seconds * float64(time.Second)), "", nil
}

// cpuSeconds is d in whole seconds, rounded up, for RLIMIT_CPU.
func cpuSeconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }

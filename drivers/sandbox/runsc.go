//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcs-go/mcs/internal/outcap"
)

// runsc runs each command in a gVisor sandbox: an OCI bundle of its own, the
// same file system as the bwrap backend (the system read-only, the account
// files of the sandbox, a private /tmp, the workspace), run by runsc with no
// network. gVisor's kernel stands between the command and the host's.
type runsc struct {
	cfg      Config
	path     string
	uid, gid int // the workspace's owner
}

func newRunsc(cfg Config) (backend, error) {
	path, err := exec.LookPath("runsc")
	if err != nil {
		return nil, errors.New("gVisor (runsc) is not installed or not on PATH; install it (https://gvisor.dev/docs/user_guide/install/), or choose the bwrap backend")
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("the runsc backend needs root (runsc creates the sandbox's namespaces); run as root, or choose the bwrap backend")
	}
	uid, gid, err := workspaceOwner(cfg.Workspace)
	if err != nil {
		return nil, err
	}
	r := &runsc{cfg: cfg, path: path, uid: uid, gid: gid}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := r.run(ctx, request{command: "exit 0", timeout: 50 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("runsc cannot run a command on this machine: %w", err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("runsc cannot run a command on this machine (exit status %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return r, nil
}

// workspaceOwner returns the owner of the workspace, who must not be root.
func workspaceOwner(ws string) (int, int, error) {
	fi, err := os.Stat(ws)
	if err != nil {
		return 0, 0, fmt.Errorf("workspace %q: %w", ws, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("workspace %q: cannot read its owner", ws)
	}
	if st.Uid == 0 {
		return 0, 0, fmt.Errorf("workspace %q belongs to root: commands run as the workspace's owner, and that must not be root; give it to an unprivileged user (chown 65534:65534 %s, or a user of its own)", ws, ws)
	}
	return int(st.Uid), int(st.Gid), nil
}

func (r *runsc) owner() (int, int) { return r.uid, r.gid }

func (r *runsc) close() error { return nil }

// ociSpec is the part of an OCI runtime configuration the sandbox sets.
type ociSpec struct {
	OCIVersion string       `json:"ociVersion"`
	Process    ociProcess   `json:"process"`
	Root       ociRoot      `json:"root"`
	Hostname   string       `json:"hostname"`
	Mounts     []ociMount   `json:"mounts"`
	Linux      ociLinuxSpec `json:"linux"`
}

type ociProcess struct {
	Terminal        bool                `json:"terminal"`
	User            ociUser             `json:"user"`
	Args            []string            `json:"args"`
	Env             []string            `json:"env"`
	Cwd             string              `json:"cwd"`
	Capabilities    map[string][]string `json:"capabilities"`
	Rlimits         []ociRlimit         `json:"rlimits"`
	NoNewPrivileges bool                `json:"noNewPrivileges"`
}

type ociUser struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

type ociRlimit struct {
	Type string `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

type ociRoot struct {
	Path     string `json:"path"`
	Readonly bool   `json:"readonly"`
}

type ociMount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type"`
	Source      string   `json:"source"`
	Options     []string `json:"options,omitempty"`
}

type ociLinuxSpec struct {
	Namespaces []map[string]string `json:"namespaces"`
	Resources  map[string]any      `json:"resources"`
}

// spec is the OCI configuration of one command; etc is the directory of the
// bundle that holds the account files.
func (r *runsc) spec(command, etc string) ociSpec {
	limit := func(typ string, n int64) ociRlimit {
		return ociRlimit{Type: typ, Hard: uint64(n), Soft: uint64(n)}
	}
	mounts := []ociMount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", fmt.Sprintf("size=%d", TmpSize)}},
		{Destination: "/usr", Type: "bind", Source: "/usr", Options: []string{"rbind", "ro", "nosuid", "nodev"}},
		{Destination: "/etc/passwd", Type: "bind", Source: filepath.Join(etc, "passwd"), Options: []string{"bind", "ro"}},
		{Destination: "/etc/group", Type: "bind", Source: filepath.Join(etc, "group"), Options: []string{"bind", "ro"}},
	}
	files := hostFiles
	if r.cfg.Network {
		files = append(append([]string(nil), files...), netFiles...)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			mounts = append(mounts, ociMount{Destination: f, Type: "bind", Source: f, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
		}
	}
	mounts = append(mounts, ociMount{Destination: "/workspace", Type: "bind", Source: r.cfg.Workspace, Options: []string{"rbind", "rw", "nosuid", "nodev"}})
	namespaces := []map[string]string{{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}}
	if !r.cfg.Network {
		namespaces = append(namespaces, map[string]string{"type": "network"})
	}
	return ociSpec{
		OCIVersion: "1.0.2",
		Process: ociProcess{
			User:         ociUser{UID: uint32(r.uid), GID: uint32(r.gid)},
			Args:         []string{"/bin/sh", "-c", command},
			Env:          r.cfg.environ(),
			Cwd:          "/workspace",
			Capabilities: map[string][]string{"bounding": {}, "effective": {}, "inheritable": {}, "permitted": {}, "ambient": {}},
			Rlimits: []ociRlimit{
				limit("RLIMIT_AS", r.cfg.Memory),
				limit("RLIMIT_CPU", cpuSeconds(r.cfg.CPU)),
				limit("RLIMIT_NPROC", int64(r.cfg.MaxProcesses)),
				limit("RLIMIT_FSIZE", r.cfg.fileSizeLimit()),
				limit("RLIMIT_NOFILE", MaxOpenFiles),
				limit("RLIMIT_CORE", 0),
			},
			NoNewPrivileges: true,
		},
		Root:     ociRoot{Path: "rootfs", Readonly: true},
		Hostname: "sandbox",
		Mounts:   mounts,
		Linux: ociLinuxSpec{
			Namespaces: namespaces,
			Resources: map[string]any{
				"pids":   map[string]any{"limit": r.cfg.MaxProcesses},
				"memory": map[string]any{"limit": r.cfg.Memory},
			},
		},
	}
}

// bundle writes the OCI bundle of one command into a new directory: the
// configuration, an empty root with the mount points and the links of a
// merged /usr, and the account files.
func (r *runsc) bundle(command string) (string, error) {
	dir, err := os.MkdirTemp("", "mcs-runsc-")
	if err != nil {
		return "", err
	}
	etc := filepath.Join(dir, "etc")
	rootfs := filepath.Join(dir, "rootfs")
	for _, d := range []string{etc, rootfs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	for _, d := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		if target, err := os.Readlink("/" + d); err == nil {
			os.Symlink(target, filepath.Join(rootfs, d))
		}
	}
	werr := errors.Join(
		os.WriteFile(filepath.Join(etc, "passwd"), []byte(strings.ReplaceAll(sandboxPasswd, "1000:1000", fmt.Sprintf("%d:%d", r.uid, r.gid))), 0o644),
		os.WriteFile(filepath.Join(etc, "group"), []byte(strings.ReplaceAll(sandboxGroup, "1000", fmt.Sprint(r.gid))), 0o644),
	)
	b, err := json.MarshalIndent(r.spec(command, etc), "", "  ")
	werr = errors.Join(werr, err, os.WriteFile(filepath.Join(dir, "config.json"), b, 0o600))
	if werr != nil {
		os.RemoveAll(dir)
		return "", werr
	}
	return dir, nil
}

func (r *runsc) run(ctx context.Context, req request) (*runResult, error) {
	dir, err := r.bundle(req.command)
	if err != nil {
		return nil, fmt.Errorf("write the sandbox's bundle: %w", err)
	}
	defer os.RemoveAll(dir)
	id := fmt.Sprintf("mcs-%016x", rand.Uint64())
	network := "none"
	if r.cfg.Network {
		network = "host"
	}
	root := filepath.Join(dir, "state")
	cmd := exec.Command(r.path, "--root", root, "--network", network, "run", "--bundle", dir, id)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	stdout := &outcap.Buffer{Max: r.cfg.MaxOutputBytes}
	stderr := &outcap.Buffer{Max: r.cfg.MaxOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if req.stdin != "" {
		cmd.Stdin = strings.NewReader(req.stdin)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start runsc: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() {
		exec.Command(r.path, "--root", root, "kill", id, "KILL").Run()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		exec.Command(r.path, "--root", root, "delete", "--force", id).Run()
	}
	timer := time.NewTimer(req.timeout)
	defer timer.Stop()
	var waitErr error
	timedOut, aborted := false, false
	select {
	case waitErr = <-done:
		exec.Command(r.path, "--root", root, "delete", "--force", id).Run()
	case <-timer.C:
		timedOut = true
		kill()
	case <-req.abort:
		aborted = true
		kill()
	case <-ctx.Done():
		kill()
		return nil, context.Cause(ctx)
	}
	res := &runResult{Stdout: stdout.String(), Stderr: stderr.String(), TimedOut: timedOut, Truncated: stdout.Truncated() || stderr.Truncated()}
	var ee *exec.ExitError
	switch {
	case timedOut:
		res.ExitCode = -1
		res.Notice = fmt.Sprintf("the command ran longer than %v and was killed with all its processes (the sandbox was killed)", req.timeout)
	case aborted:
		res.ExitCode = -1
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		return nil, fmt.Errorf("runsc: %w", waitErr)
	}
	if res.Truncated {
		res.Notice = strings.TrimPrefix(res.Notice+"; the output was longer than the limit: its start and its end are shown", "; ")
	}
	return res, nil
}

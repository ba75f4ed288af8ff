package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcs-go/mcs/internal/outcap"
)

// The user a command runs as, inside its user namespace.
const sandboxUID, sandboxGID = 1000, 1000

// The account files of the sandbox: nothing of the host's.
const (
	sandboxPasswd = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nsandbox:x:1000:1000:sandbox:/workspace:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	sandboxGroup  = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n"
)

// hostFiles are the files of the host's /etc a command may read: what the
// dynamic linker and the alternatives need, nothing about users or secrets.
var hostFiles = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime", "/etc/nsswitch.conf"}

// netFiles are added when the network is on.
var netFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/gai.conf", "/etc/ssl/certs", "/etc/ca-certificates"}

// bwrap runs commands with bubblewrap.
type bwrap struct {
	cfg     Config
	path    string // bwrap
	prlimit string // prlimit, under /usr
	args    []string
	env     []string
	cred    *syscall.Credential // the host user commands run as, when the driver is root
}

// newBwrap finds bwrap and prlimit, chooses the host user and tries a command.
func newBwrap(cfg Config) (*bwrap, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("bubblewrap (bwrap) is not installed or not on PATH; install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or choose the runsc or docker backend")
	}
	pl, err := exec.LookPath("prlimit")
	if err == nil {
		pl, err = filepath.EvalSymlinks(pl)
	}
	if err != nil || !strings.HasPrefix(pl, "/usr/") {
		return nil, errors.New("prlimit, which sets the resource limits of a command, is not installed under /usr; install util-linux (Debian and Ubuntu: apt-get install util-linux)")
	}
	b := &bwrap{cfg: cfg, path: path, prlimit: pl, env: cfg.environ()}
	if os.Geteuid() == 0 {
		// Under a user namespace made by root, the command is still root on the
		// host: its files, its processes (RLIMIT_NPROC does not hold for root).
		// Run it as the workspace's owner, who must not be root.
		fi, err := os.Stat(cfg.Workspace)
		if err != nil {
			return nil, fmt.Errorf("workspace %q: %w", cfg.Workspace, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil, fmt.Errorf("workspace %q: cannot read its owner", cfg.Workspace)
		}
		if st.Uid == 0 {
			return nil, fmt.Errorf("workspace %q belongs to root: this program runs as root, so commands run as the host user who owns the workspace, and that must not be root; give it to an unprivileged user (chown 65534:65534 %s, or a user of its own) and make its parent directories reachable by that user", cfg.Workspace, cfg.Workspace)
		}
		b.cred = &syscall.Credential{Uid: st.Uid, Gid: st.Gid, Groups: []uint32{}}
	}
	b.args = b.staticArgs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := b.run(ctx, request{command: "exit 0", timeout: 20 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("bwrap cannot run a command on this machine: %w; user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap)", err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("bwrap cannot run a command on this machine (exit status %d): %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	return b, nil
}

// staticArgs are the options of every command: the namespaces, the file
// system, the status descriptor (3) and the account files (4, 5).
func (b *bwrap) staticArgs() []string {
	a := []string{"--unshare-all"}
	if b.cfg.Network {
		a = append(a, "--share-net")
	}
	a = append(a, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--uid", strconv.Itoa(sandboxUID), "--gid", strconv.Itoa(sandboxGID), "--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr")
	for _, dir := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(dir)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(dir); err == nil {
				a = append(a, "--symlink", target, dir)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", dir, dir)
		}
	}
	files := hostFiles
	if b.cfg.Network {
		files = append(slices.Clip(files), netFiles...)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			a = append(a, "--ro-bind", f, f)
		}
	}
	a = append(a,
		"--ro-bind-data", "4", "/etc/passwd",
		"--ro-bind-data", "5", "/etc/group",
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.Itoa(TmpSize), "--tmpfs", "/tmp",
		"--bind", b.cfg.Workspace, "/workspace",
		"--remount-ro", "/",
		"--chdir", "/workspace",
		"--json-status-fd", "3",
		"--", b.prlimit,
		fmt.Sprintf("--as=%d:%d", b.cfg.Memory, b.cfg.Memory),
		fmt.Sprintf("--cpu=%d:%d", cpuSeconds(b.cfg.CPU), cpuSeconds(b.cfg.CPU)),
		fmt.Sprintf("--nproc=%d:%d", b.cfg.MaxProcesses, b.cfg.MaxProcesses),
		fmt.Sprintf("--fsize=%d:%d", b.cfg.fileSizeLimit(), b.cfg.fileSizeLimit()),
		fmt.Sprintf("--nofile=%d:%d", MaxOpenFiles, MaxOpenFiles),
		"--core=0:0",
		"--", "/bin/sh", "-c")
	return a
}

func (b *bwrap) owner() (int, int) {
	if b.cred == nil {
		return -1, -1
	}
	return int(b.cred.Uid), int(b.cred.Gid)
}

func (b *bwrap) close() error { return nil }

// dataPipe returns the read end of a pipe that holds data, already written and
// closed on the other end.
func dataPipe(data string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = io.WriteString(w, data) // far below the capacity of a pipe
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// status is what bwrap reports on its status descriptor.
type status struct {
	mu       sync.Mutex
	pidfd    int // of the namespace's first process, or -1
	exitCode *int
}

// read decodes the status records until the descriptor closes.
func (s *status) read(r io.Reader) {
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var rec struct {
			ChildPID *int `json:"child-pid"`
			ExitCode *int `json:"exit-code"`
		}
		if err := dec.Decode(&rec); err != nil {
			return
		}
		s.mu.Lock()
		if rec.ChildPID != nil && s.pidfd < 0 {
			if fd, err := unix.PidfdOpen(*rec.ChildPID, 0); err == nil {
				s.pidfd = fd
			}
		}
		if rec.ExitCode != nil {
			s.exitCode = rec.ExitCode
		}
		s.mu.Unlock()
	}
}

// kill kills the namespace's first process, which takes every process of the
// namespace with it.
func (s *status) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pidfd >= 0 {
		unix.PidfdSendSignal(s.pidfd, unix.SIGKILL, nil, 0)
	}
}

// awaitGone waits, at most d, until the namespace's first process has exited:
// the kernel ends it only when every other process of the namespace has ended.
func (s *status) awaitGone(d time.Duration) {
	s.mu.Lock()
	fd := s.pidfd
	s.pidfd = -1
	s.mu.Unlock()
	if fd < 0 {
		return
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(d)
	for {
		ms := int(time.Until(deadline) / time.Millisecond)
		if ms <= 0 {
			return
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return
		}
	}
}

// closeOnExec marks every descriptor of this process above stderr
// close-on-exec. Go opens its own descriptors so, but one inherited from the
// parent process is not, and would otherwise pass through bwrap into the
// sandbox: an open file or socket of the host.
func closeOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC)
		}
	}
}

func (b *bwrap) run(ctx context.Context, req request) (*runResult, error) {
	closeOnExec()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create a pipe: %w", err)
	}
	defer statusR.Close()
	passwd, err := dataPipe(sandboxPasswd)
	if err != nil {
		statusW.Close()
		return nil, fmt.Errorf("create a pipe: %w", err)
	}
	group, err := dataPipe(sandboxGroup)
	if err != nil {
		statusW.Close()
		passwd.Close()
		return nil, fmt.Errorf("create a pipe: %w", err)
	}
	cmd := exec.Command(b.path, append(slices.Clip(b.args), req.command)...)
	cmd.Env = b.env // bwrap passes its environment on, and nothing else
	cmd.Dir = "/"
	stdout := &outcap.Buffer{Max: b.cfg.MaxOutputBytes}
	stderr := &outcap.Buffer{Max: b.cfg.MaxOutputBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if req.stdin != "" {
		cmd.Stdin = strings.NewReader(req.stdin)
	}
	cmd.ExtraFiles = []*os.File{statusW, passwd, group}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: b.cred}
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	statusW.Close()
	passwd.Close()
	group.Close()
	if err != nil {
		return nil, fmt.Errorf("start bwrap: %w", err)
	}
	st := &status{pidfd: -1}
	statusDone := make(chan struct{})
	go func() {
		defer close(statusDone)
		st.read(statusR)
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	timer := time.NewTimer(req.timeout)
	defer timer.Stop()
	killAll := func() {
		st.kill()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	timedOut, aborted := false, false
	var waitErr error
	select {
	case waitErr = <-waitDone:
	case <-timer.C:
		timedOut = true
		killAll()
		waitErr = <-waitDone
	case <-req.abort:
		aborted = true
		killAll()
		waitErr = <-waitDone
	case <-ctx.Done():
		killAll()
		<-waitDone
		<-statusDone
		st.awaitGone(5 * time.Second)
		return nil, context.Cause(ctx)
	}
	<-statusDone
	st.awaitGone(5 * time.Second)

	res := &runResult{
		Stdout:    stdout.String(),
		Stderr:    stderr.String(),
		TimedOut:  timedOut,
		Truncated: stdout.Truncated() || stderr.Truncated(),
	}
	switch {
	case timedOut:
		res.ExitCode = -1
		res.Notice = fmt.Sprintf("the command ran longer than %v and was killed with all its processes", req.timeout)
	case aborted:
		res.ExitCode = -1
	case st.exitCode != nil:
		res.ExitCode = *st.exitCode
		if sig := res.ExitCode - 128; sig > 0 && sig < 65 {
			res.Notice = fmt.Sprintf("the command was killed by signal %d (%s)", sig, signalHint(syscall.Signal(sig)))
		}
	default:
		return nil, fmt.Errorf("bwrap could not start the command (%v): %s", waitErr, strings.TrimSpace(res.Stderr))
	}
	if res.Truncated {
		res.Notice = strings.TrimPrefix(res.Notice+"; the output was longer than the limit: its start and its end are shown", "; ")
	}
	return res, nil
}

// signalHint says what a signal that killed a command likely means.
func signalHint(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGXCPU:
		return "its CPU time limit was reached"
	case syscall.SIGXFSZ:
		return "it wrote a file larger than the limit"
	case syscall.SIGKILL:
		return "killed, possibly for exceeding a limit"
	case syscall.SIGSEGV, syscall.SIGBUS:
		return "a crash, possibly for lack of memory"
	}
	return sig.String()
}

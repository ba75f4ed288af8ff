//go:build !windows

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/mcs-go/mcs/internal/outcap"
)

// docker runs each command in a new container of a Docker Engine, reached as
// the docker command reaches it (DOCKER_HOST, DOCKER_API_VERSION,
// DOCKER_CERT_PATH, DOCKER_TLS_VERIFY; the local socket by default).
type docker struct {
	cfg  Config
	cli  *client.Client
	user string // uid:gid of the workspace's owner
	uid  int
	gid  int
}

func newDocker(cfg Config) (backend, error) {
	if cfg.Image == "" {
		return nil, errors.New(`the docker backend needs Image, the container image commands run in, such as "debian:stable-slim"`)
	}
	fi, err := os.Stat(cfg.Workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", cfg.Workspace, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("workspace %q: cannot read its owner", cfg.Workspace)
	}
	if st.Uid == 0 {
		return nil, fmt.Errorf("workspace %q belongs to root: commands run in the container as the workspace's owner, and that must not be root; give it to an unprivileged user (chown 65534:65534 %s, or a user of its own)", cfg.Workspace, cfg.Workspace)
	}
	cli, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("cannot reach the Docker Engine (%v); start it or set DOCKER_HOST, or choose the bwrap backend", err)
	}
	if _, err := cli.ImageInspect(ctx, cfg.Image); err != nil {
		cli.Close()
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("image %q is not on the Docker Engine; pull it first (docker pull %s): the sandbox never pulls", cfg.Image, cfg.Image)
		}
		return nil, fmt.Errorf("image %q: %w", cfg.Image, err)
	}
	return &docker{cfg: cfg, cli: cli, user: fmt.Sprintf("%d:%d", st.Uid, st.Gid), uid: int(st.Uid), gid: int(st.Gid)}, nil
}

func (d *docker) owner() (int, int) { return d.uid, d.gid }

func (d *docker) close() error { return d.cli.Close() }

// createOptions is the container of one command: no network, every
// capability dropped, no new privileges, the image read-only, a private /tmp,
// the workspace, and the limits.
func (d *docker) createOptions(req request) client.ContainerCreateOptions {
	pids := int64(d.cfg.MaxProcesses)
	cpu := cpuSeconds(d.cfg.CPU)
	hc := &container.HostConfig{
		Binds:          []string{d.cfg.Workspace + ":/workspace:rw"},
		NetworkMode:    "none",
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": fmt.Sprintf("rw,nosuid,nodev,size=%d", TmpSize)},
		Resources: container.Resources{
			Memory:     d.cfg.Memory,
			MemorySwap: d.cfg.Memory,
			PidsLimit:  &pids,
			Ulimits: []*container.Ulimit{
				{Name: "cpu", Soft: cpu, Hard: cpu},
				{Name: "fsize", Soft: d.cfg.fileSizeLimit(), Hard: d.cfg.fileSizeLimit()},
				{Name: "nofile", Soft: MaxOpenFiles, Hard: MaxOpenFiles},
				{Name: "nproc", Soft: pids, Hard: pids},
				{Name: "core", Soft: 0, Hard: 0},
			},
		},
	}
	if d.cfg.Network {
		hc.NetworkMode = "bridge"
	}
	return client.ContainerCreateOptions{
		Image: d.cfg.Image,
		Config: &container.Config{
			Cmd:             []string{"/bin/sh", "-c", req.command},
			Env:             d.cfg.environ(),
			WorkingDir:      "/workspace",
			User:            d.user,
			AttachStdout:    true,
			AttachStderr:    true,
			AttachStdin:     req.stdin != "",
			OpenStdin:       req.stdin != "",
			StdinOnce:       req.stdin != "",
			NetworkDisabled: !d.cfg.Network,
			Labels:          map[string]string{"org.mcs-go.sandbox": "1"},
		},
		HostConfig: hc,
	}
}

func (d *docker) run(ctx context.Context, req request) (*runResult, error) {
	// Removing the container must happen even when ctx is done.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	created, err := d.cli.ContainerCreate(ctx, d.createOptions(req))
	if err != nil {
		return nil, fmt.Errorf("create a container: %w", err)
	}
	id := created.ID
	defer d.cli.ContainerRemove(cleanup, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})

	att, err := d.cli.ContainerAttach(ctx, id, client.ContainerAttachOptions{Stream: true, Stdin: req.stdin != "", Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("attach to the container: %w", err)
	}
	defer att.Close()
	stdout := &outcap.Buffer{Max: d.cfg.MaxOutputBytes}
	stderr := &outcap.Buffer{Max: d.cfg.MaxOutputBytes}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		stdcopy.StdCopy(stdout, stderr, att.Reader)
	}()
	waitCtx, stopWait := context.WithCancel(cleanup)
	defer stopWait()
	wait := d.cli.ContainerWait(waitCtx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := d.cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		return nil, fmt.Errorf("start the container: %w", err)
	}
	if req.stdin != "" {
		var once sync.Once
		go func() {
			io.Copy(att.Conn, strings.NewReader(req.stdin))
			once.Do(func() { att.CloseWrite() })
		}()
	}
	timer := time.NewTimer(req.timeout)
	defer timer.Stop()
	kill := func() {
		d.cli.ContainerKill(cleanup, id, client.ContainerKillOptions{Signal: "KILL"})
	}
	timedOut, aborted := false, false
	var status container.WaitResponse
	select {
	case status = <-wait.Result:
	case err := <-wait.Error:
		kill()
		return nil, fmt.Errorf("wait for the container: %w", err)
	case <-timer.C:
		timedOut = true
	case <-req.abort:
		aborted = true
	case <-ctx.Done():
		kill()
		return nil, context.Cause(ctx)
	}
	if timedOut || aborted {
		kill()
		select {
		case status = <-wait.Result:
		case <-wait.Error:
		case <-cleanup.Done():
		}
	}
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
	}
	res := &runResult{
		ExitCode:  int(status.StatusCode),
		Stdout:    stdout.String(),
		Stderr:    stderr.String(),
		TimedOut:  timedOut,
		Truncated: stdout.Truncated() || stderr.Truncated(),
	}
	if status.Error != nil && status.Error.Message != "" && !timedOut && !aborted {
		return nil, fmt.Errorf("the container failed: %s", status.Error.Message)
	}
	switch {
	case timedOut:
		res.ExitCode = -1
		res.Notice = fmt.Sprintf("the command ran longer than %v and was killed with all its processes (the container was killed)", req.timeout)
	case aborted:
		res.ExitCode = -1
	case res.ExitCode == 137:
		res.Notice = "the command was killed by signal 9 (killed, possibly for exceeding a limit such as memory)"
	}
	if res.Truncated {
		res.Notice = strings.TrimPrefix(res.Notice+"; the output was longer than the limit: its start and its end are shown", "; ")
	}
	return res, nil
}

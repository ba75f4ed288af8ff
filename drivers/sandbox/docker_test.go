package sandbox_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"

	"github.com/mcs-go/mcs/drivers/sandbox"
	"github.com/mcs-go/mcs/internal/drivertest"
)

// fakeEngine is a Docker Engine API on loopback that "runs" a few commands:
// "echo TEXT" (stdout), "fail" (stderr and exit 3), "cat" (stdin to stdout),
// "flood" (a lot of output), and any other command runs until killed.
type fakeEngine struct {
	*httptest.Server
	mu         sync.Mutex
	created    []container.CreateRequest
	containers map[string]*fakeContainer
	removed    []string
	killed     []string
	next       int
}

type fakeContainer struct {
	cmd    string
	attach chan io.ReadWriteCloser // the hijacked attach connection
	killed chan struct{}
	exited chan int
	once   sync.Once
}

func newFakeEngine(t *testing.T) *fakeEngine {
	e := &fakeEngine{containers: map[string]*fakeContainer{}}
	version := regexp.MustCompile(`^/v[0-9.]+`)
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := version.ReplaceAllString(r.URL.Path, "")
		parts := strings.Split(strings.Trim(p, "/"), "/")
		switch {
		case p == "/_ping":
			w.Header().Set("Api-Version", "1.47")
			io.WriteString(w, "OK")
		case len(parts) == 3 && parts[0] == "images" && parts[2] == "json":
			if parts[1] != "debian:stable-slim" {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"message":"No such image"}`)
				return
			}
			io.WriteString(w, `{"Id":"sha256:abc"}`)
		case p == "/containers/create":
			var req container.CreateRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			e.mu.Lock()
			e.next++
			id := fmt.Sprintf("c%d", e.next)
			e.created = append(e.created, req)
			e.containers[id] = &fakeContainer{cmd: req.Config.Cmd[len(req.Config.Cmd)-1], attach: make(chan io.ReadWriteCloser, 1), killed: make(chan struct{}), exited: make(chan int, 1)}
			e.mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"Id":%q,"Warnings":[]}`, id)
		case len(parts) >= 2 && parts[0] == "containers":
			e.mu.Lock()
			c := e.containers[parts[1]]
			e.mu.Unlock()
			if c == nil {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"message":"No such container"}`)
				return
			}
			action := ""
			if len(parts) == 3 {
				action = parts[2]
			}
			switch {
			case r.Method == http.MethodDelete:
				e.mu.Lock()
				e.removed = append(e.removed, parts[1])
				e.mu.Unlock()
				c.once.Do(func() { close(c.killed) })
				w.WriteHeader(http.StatusNoContent)
			case action == "attach":
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					return
				}
				buf.WriteString("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.multiplexed-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
				buf.Flush()
				c.attach <- struct {
					io.Reader
					io.Writer
					io.Closer
				}{bufio.NewReader(conn), conn, conn}
			case action == "start":
				w.WriteHeader(http.StatusNoContent)
				go c.run()
			case action == "wait":
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				code := <-c.exited
				fmt.Fprintf(w, `{"StatusCode":%d}`, code)
			case action == "kill":
				e.mu.Lock()
				e.killed = append(e.killed, parts[1])
				e.mu.Unlock()
				c.once.Do(func() { close(c.killed) })
				w.WriteHeader(http.StatusNoContent)
			default:
				http.NotFound(w, r)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(e.Close)
	t.Setenv("DOCKER_HOST", "tcp://"+e.Listener.Addr().String())
	t.Setenv("DOCKER_API_VERSION", "")
	t.Setenv("DOCKER_TLS_VERIFY", "")
	return e
}

// run plays the container's command on its attach connection.
func (c *fakeContainer) run() {
	conn := <-c.attach
	defer conn.Close()
	out := stdWriter{conn, stdcopy.Stdout}
	errw := stdWriter{conn, stdcopy.Stderr}
	code := 0
	switch cmd := c.cmd; {
	case strings.HasPrefix(cmd, "echo "):
		io.WriteString(out, strings.TrimPrefix(cmd, "echo ")+"\n")
	case cmd == "fail":
		io.WriteString(errw, "it failed\n")
		code = 3
	case cmd == "cat":
		io.Copy(out, conn)
	case cmd == "flood":
		chunk := strings.Repeat("x", 1<<16)
		for range 64 {
			io.WriteString(out, chunk)
		}
		io.WriteString(out, "END\n")
	default:
		<-c.killed
		code = 137
	}
	c.exited <- code
}

// stdWriter writes the frames of the engine's multiplexed stream.
type stdWriter struct {
	w   io.Writer
	typ stdcopy.StdType
}

func (s stdWriter) Write(p []byte) (int, error) {
	head := []byte{byte(s.typ), 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(head[4:], uint32(len(p)))
	if _, err := s.w.Write(append(head, p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func dockerTD(t *testing.T, cfg sandbox.Config) *sandbox.ToolDriver {
	t.Helper()
	cfg.Backend = "docker"
	if cfg.Image == "" {
		cfg.Image = "debian:stable-slim"
	}
	if cfg.Workspace == "" {
		cfg.Workspace = newWorkspace(t)
	}
	return drivertest.Open(t, sandbox.NewToolDriver, cfg)
}

func TestDockerRun(t *testing.T) {
	e := newFakeEngine(t)
	td := dockerTD(t, sandbox.Config{Timeout: time.Second, MaxOutputBytes: 1000, Env: map[string]string{"A": "1"}})
	tests := []struct {
		name    string
		command string
		args    map[string]any
		want    result
	}{
		{"stdout", "echo hello", nil, result{Stdout: "hello\n"}},
		{"stderr and exit status", "fail", nil, result{ExitCode: 3, Stderr: "it failed\n"}},
		{"stdin", "cat", map[string]any{"stdin": "from the model\n"}, result{Stdout: "from the model\n"}},
		{"timeout", "sleep 100", nil, result{ExitCode: -1, TimedOut: true, Notice: "the command ran longer than 1s and was killed with all its processes (the container was killed)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, run(t, td, tc.command, tc.args)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("flood is capped", func(t *testing.T) {
		r := run(t, td, "flood", nil)
		if !r.Truncated || !strings.HasSuffix(r.Stdout, "END\n") || len(r.Stdout) > 1200 {
			t.Errorf("result %+v", r)
		}
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.removed) != len(e.created) {
		t.Errorf("%d containers created, %d removed", len(e.created), len(e.removed))
	}
	if len(e.killed) != 1 {
		t.Errorf("killed %v, want the one that timed out", e.killed)
	}
	// Every container is isolated and limited.
	req := e.created[0]
	hc := req.HostConfig
	got := map[string]any{
		"network":   string(hc.NetworkMode),
		"disabled":  req.Config.NetworkDisabled,
		"capdrop":   hc.CapDrop,
		"secopt":    hc.SecurityOpt,
		"readonly":  hc.ReadonlyRootfs,
		"memory":    hc.Memory,
		"pids":      *hc.PidsLimit,
		"workdir":   req.Config.WorkingDir,
		"user":      req.Config.User,
		"env":       req.Config.Env,
		"cmd":       req.Config.Cmd,
		"tmpfs":     hc.Tmpfs["/tmp"],
		"binds":     len(hc.Binds),
		"ulimits":   len(hc.Ulimits),
		"privilege": hc.Privileged,
	}
	want := map[string]any{
		"network": "none", "disabled": true, "capdrop": []string{"ALL"}, "secopt": []string{"no-new-privileges:true"},
		"readonly": true, "memory": int64(sandbox.DefaultMemory), "pids": int64(sandbox.DefaultMaxProcesses),
		"workdir": "/workspace", "user": "65534:65534",
		"env": []string{"A=1", "HOME=/workspace", "LANG=C.UTF-8", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"},
		"cmd": []string{"/bin/sh", "-c", "echo hello"}, "tmpfs": fmt.Sprintf("rw,nosuid,nodev,size=%d", sandbox.TmpSize),
		"binds": 1, "ulimits": 5, "privilege": false,
	}
	if os.Geteuid() != 0 {
		delete(got, "user")
		delete(want, "user")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("container configuration (-want +got):\n%s", diff)
	}
}

func TestDockerErrors(t *testing.T) {
	newFakeEngine(t)
	ws := newWorkspace(t)
	tests := []struct {
		name string
		cfg  sandbox.Config
		want string
	}{
		{"no image", sandbox.Config{Backend: "docker", Workspace: ws}, "needs Image"},
		{"missing image", sandbox.Config{Backend: "docker", Workspace: ws, Image: "alpine:3"}, `image "alpine:3" is not on the Docker Engine; pull it first`},
	}
	for _, tc := range tests {
		if _, err := sandbox.NewToolDriver(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want %q", tc.name, err, tc.want)
		}
	}
	t.Setenv("DOCKER_HOST", "tcp://127.0.0.1:1")
	if _, err := sandbox.NewToolDriver(sandbox.Config{Backend: "docker", Workspace: ws, Image: "debian:stable-slim"}); err == nil || !strings.Contains(err.Error(), "cannot reach the Docker Engine") {
		t.Errorf("no engine: error = %v", err)
	}
}

package mcp

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the shutdown of a stdio server.
const (
	// terminateAfter is how long Close waits for a child to exit after its
	// input was closed, before it sends SIGTERM, and again before SIGKILL.
	terminateAfter = 3 * time.Second
	// waitDelay bounds how long the driver waits for the child's standard error
	// to close after it exited (a grandchild may hold it open).
	waitDelay = 2 * time.Second
	// exitGrace is how long a failed call waits for the exit status of a child
	// whose connection broke, to name it in the error.
	exitGrace = time.Second
)

// session is one connection to the server: the SDK session and, for a stdio
// server, the child process.
type session struct {
	cs *mcpsdk.ClientSession
	g  *guard // faults found in the traffic; never nil

	cmd      *exec.Cmd
	stderr   *tail
	procDone chan struct{} // closed when the child was reaped; nil without child
	procErr  error         // the child's exit; read after procDone

	ended  chan struct{} // closed when the SDK session ended
	endErr error         // read after ended

	mu     sync.Mutex
	broken error // set when a call or ping found the connection unusable
	closed bool  // closed by the driver
}

// start starts the child of a stdio session. A line of its output may hold at
// most maxMessage bytes, and a listing at most maxTools tools, counted as it is
// read.
func (s *session) start(cmd *exec.Cmd, maxMessage, maxTools int) (mcpsdk.Transport, error) {
	isolate(cmd)
	s.stderr = &tail{max: MaxStderrBytes}
	cmd.Stderr = s.stderr
	cmd.WaitDelay = waitDelay
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.cmd = cmd
	s.procDone = make(chan struct{})
	go func() {
		s.procErr = cmd.Wait()
		close(s.procDone)
	}()
	out := &limitedBody{body: stdout, g: s.g, tools: toolCounter{max: maxTools}}
	return &mcpsdk.IOTransport{Reader: out, Writer: stdin, MaxLineLength: maxMessage}, nil
}

// watch starts the goroutine that notices the end of the SDK session.
func (s *session) watch() {
	s.ended = make(chan struct{})
	go func() {
		s.endErr = s.cs.Wait()
		s.waitExit(exitGrace) // to name the exit rather than the closed pipe
		close(s.ended)
	}()
}

// markBroken records that the connection is unusable; the next call reconnects.
func (s *session) markBroken(err error) {
	s.mu.Lock()
	if s.broken == nil {
		s.broken = err
	}
	s.mu.Unlock()
}

// deadReason returns why the session cannot serve calls, or "" when it can.
func (s *session) deadReason() string {
	if err := s.deadErr(); err != nil {
		return err.Error()
	}
	return ""
}

// deadErr returns why the session cannot serve calls, or nil when it can: a
// fault the transport found (wrapping [ErrRedirect], [ErrServerLimit] or
// [ErrMalformedStream]) before the symptoms it caused.
func (s *session) deadErr() error {
	exited := false
	if s.procDone != nil {
		select {
		case <-s.procDone:
			exited = true
		default:
		}
	}
	ended := false
	select {
	case <-s.ended:
		ended = true
	default:
	}
	s.mu.Lock()
	broken, closed := s.broken, s.closed
	s.mu.Unlock()
	fault := s.g.fault()
	switch {
	case closed:
		return errors.New("session closed")
	case fault != nil:
		return fault
	case exited:
		return errors.New(s.exitText())
	case ended:
		if s.endErr != nil {
			if m := malformed(s.endErr); m != nil {
				return m
			}
			return fmt.Errorf("session ended: %w", s.endErr)
		}
		return errors.New("session ended by the server")
	case broken != nil:
		if m := malformed(broken); m != nil {
			return m
		}
		return fmt.Errorf("connection lost: %w", broken)
	}
	return nil
}

// exitText describes the child's exit; call it after procDone.
func (s *session) exitText() string {
	msg := "server process exited"
	if s.procErr != nil {
		msg += " (" + s.procErr.Error() + ")"
	} else {
		msg += " (status 0)"
	}
	if e := s.stderr.String(); e != "" {
		msg += "; stderr (end): " + e
	}
	return msg
}

// waitExit waits at most d for the child to be reaped and reports whether it was.
func (s *session) waitExit(d time.Duration) bool {
	if s.procDone == nil {
		return false
	}
	select {
	case <-s.procDone:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.procDone:
		return true
	case <-t.C:
		return false
	}
}

// close ends the SDK session and the child. Calls in flight must have been
// cancelled, or close waits for them.
func (s *session) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.cs != nil {
		_ = s.cs.Close()
		<-s.ended
	}
	s.stopProcess()
}

// stopProcess waits for the child to exit after its input was closed, then
// terminates and finally kills its process group, and reaps it.
func (s *session) stopProcess() {
	if s.cmd == nil {
		return
	}
	if !s.waitExit(terminateAfter) {
		signalGroup(s.cmd, false)
		if !s.waitExit(terminateAfter) {
			signalGroup(s.cmd, true)
			<-s.procDone
		}
	}
	// Programs the child started and left behind.
	signalGroup(s.cmd, true)
}

// tail keeps the last max bytes written to it. It is safe for concurrent use.
type tail struct {
	mu   sync.Mutex
	max  int
	buf  []byte
	lost bool
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		p = p[len(p)-t.max:]
		t.buf = append(t.buf[:0], p...)
		t.lost = true
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.lost = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept text: valid UTF-8, control characters other than
// newline and tab replaced, trimmed, with "..." in front when earlier output
// was dropped.
func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	b := append([]byte(nil), t.buf...)
	lost := t.lost
	t.mu.Unlock()
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if lost && s != "" {
		s = "..." + s
	}
	return s
}

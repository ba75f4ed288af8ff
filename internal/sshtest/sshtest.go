//go:build unix

// Package sshtest runs an SSH server on loopback for tests: password and
// public key logins, "exec" requests run by /bin/sh -c as the test's user,
// "signal" requests delivered to the command's process group, and the "sftp"
// subsystem of github.com/pkg/sftp. It also writes keys and known_hosts files.
package sshtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/pkg/sftp"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Server is an SSH server on loopback. It is safe for concurrent use.
type Server struct {
	// Addr is the address the server listens on, 127.0.0.1:port.
	Addr string
	// HostKey is the server's host key.
	HostKey gossh.Signer
	// KnownHosts is a known_hosts file that pins HostKey for Addr.
	KnownHosts string
	// User and Password log in; so does User with the key of AuthorizedKey.
	User, Password string

	ln         net.Listener
	authorized []gossh.PublicKey
	mu         sync.Mutex
	commands   []string
	conns      []net.Conn
	wg         sync.WaitGroup
}

// Options configure a Server.
type Options struct {
	// AuthorizedKeys may log in as the user.
	AuthorizedKeys []gossh.PublicKey
	// HostKey replaces the generated Ed25519 host key.
	HostKey gossh.Signer
}

// Start starts a server for tb, stopped when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s, err := New(tb.TempDir(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// New starts a server whose known_hosts file is written in dir. Close stops it.
func New(dir string, opts Options) (*Server, error) {
	hk := opts.HostKey
	if hk == nil {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		if hk, err = gossh.NewSignerFromKey(priv); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: ln.Addr().String(), HostKey: hk, User: "tester", Password: "correct horse", ln: ln, authorized: opts.AuthorizedKeys}
	s.KnownHosts = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(s.KnownHosts, []byte(knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, hk.PublicKey())+"\n"), 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	cfg := &gossh.ServerConfig{
		PasswordCallback: func(c gossh.ConnMetadata, pw []byte) (*gossh.Permissions, error) {
			if c.User() == s.User && string(pw) == s.Password {
				return nil, nil
			}
			return nil, errors.New("wrong password")
		},
		PublicKeyCallback: func(c gossh.ConnMetadata, key gossh.PublicKey) (*gossh.Permissions, error) {
			for _, k := range s.authorized {
				if c.User() == s.User && bytes.Equal(k.Marshal(), key.Marshal()) {
					return nil, nil
				}
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(hk)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, nc)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serveConn(nc, cfg)
			}()
		}
	}()
	return s, nil
}

// Close stops the server: it closes the listener and every connection, and
// waits for the sessions to end.
func (s *Server) Close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Commands returns the command lines of the exec requests received so far.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

func (s *Server) serveConn(nc net.Conn, cfg *gossh.ServerConfig) {
	defer nc.Close()
	conn, chans, reqs, err := gossh.NewServerConn(nc, cfg)
	if err != nil {
		return
	}
	defer conn.Close()
	go gossh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	defer wg.Wait()
	for nch := range chans {
		if nch.ChannelType() != "session" {
			nch.Reject(gossh.UnknownChannelType, "only sessions")
			continue
		}
		ch, reqs, err := nch.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveSession(ch, reqs)
		}()
	}
}

func (s *Server) serveSession(ch gossh.Channel, reqs <-chan *gossh.Request) {
	defer ch.Close()
	var cmd *exec.Cmd
	exited := make(chan struct{})
	for req := range reqs {
		switch req.Type {
		case "exec":
			if cmd != nil || len(req.Payload) < 4 {
				req.Reply(false, nil)
				continue
			}
			line := string(req.Payload[4:])
			s.mu.Lock()
			s.commands = append(s.commands, line)
			s.mu.Unlock()
			cmd = exec.Command("/bin/sh", "-c", line)
			cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
			cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdin, err := cmd.StdinPipe()
			if err == nil {
				err = cmd.Start()
			}
			if err != nil {
				req.Reply(false, nil)
				continue
			}
			go func() {
				io.Copy(stdin, ch)
				stdin.Close()
			}()
			req.Reply(true, nil)
			go func(cmd *exec.Cmd) {
				err := cmd.Wait()
				status := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						sig := ws.Signal()
						name := map[syscall.Signal]string{syscall.SIGKILL: "KILL", syscall.SIGTERM: "TERM", syscall.SIGINT: "INT"}[sig]
						ch.SendRequest("exit-signal", false, gossh.Marshal(struct {
							Signal     string
							CoreDumped bool
							Msg, Lang  string
						}{name, false, "", ""}))
						ch.Close()
						close(exited)
						return
					}
					status = ee.ExitCode()
				}
				ch.CloseWrite()
				ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, uint32(status)))
				ch.Close()
				close(exited)
			}(cmd)
		case "signal":
			var p struct{ Signal string }
			if cmd != nil && gossh.Unmarshal(req.Payload, &p) == nil {
				if sig, ok := map[string]syscall.Signal{"KILL": syscall.SIGKILL, "TERM": syscall.SIGTERM, "INT": syscall.SIGINT}[p.Signal]; ok {
					syscall.Kill(-cmd.Process.Pid, sig)
				}
			}
			if req.WantReply {
				req.Reply(true, nil)
			}
		case "subsystem":
			var p struct{ Name string }
			if gossh.Unmarshal(req.Payload, &p) != nil || p.Name != "sftp" {
				req.Reply(false, nil)
				continue
			}
			req.Reply(true, nil)
			go gossh.DiscardRequests(reqs)
			srv, err := sftp.NewServer(ch)
			if err != nil {
				return
			}
			srv.Serve()
			srv.Close()
			return
		case "env", "pty-req":
			req.Reply(false, nil)
		default:
			if req.WantReply {
				req.Reply(false, nil)
			}
		}
	}
	// The client closed the channel: end the command's process group, as sshd
	// does not, but a test must leave nothing behind.
	if cmd != nil && cmd.Process != nil {
		select {
		case <-exited:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
}

// NewSigner returns a new Ed25519 key.
func NewSigner(tb testing.TB) gossh.Signer {
	tb.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// KnownHosts writes a known_hosts file that pins key for addr, and returns its
// path.
func KnownHosts(tb testing.TB, addr string, key gossh.PublicKey) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "known_hosts")
	if err := os.WriteFile(p, []byte(knownhosts.Line([]string{knownhosts.Normalize(addr)}, key)+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// PEM encodes a private key in the OpenSSH format, encrypted with passphrase
// when it is not empty.
func PEM(tb testing.TB, key any, passphrase string) string {
	tb.Helper()
	var block *pem.Block
	var err error
	if passphrase == "" {
		block, err = gossh.MarshalPrivateKey(key, "")
	} else {
		block, err = gossh.MarshalPrivateKeyWithPassphrase(key, "", []byte(passphrase))
	}
	if err != nil {
		tb.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

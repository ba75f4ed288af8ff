package ssh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// DefaultDialTimeout bounds the connection and the handshake when
// Conn.DialTimeout is zero.
const DefaultDialTimeout = 15 * time.Second

// Conn says how to reach and log in to a host. It is plain data; it never
// appears in a result or an error, nor do the credentials it holds.
type Conn struct {
	// Addr is the host, with an optional port: "build.example.com" or
	// "10.0.0.5:2222" (port 22 when omitted). Required.
	Addr string
	// User is the remote user. Required.
	User string
	// KnownHosts is the known_hosts file that pins the host's key. Required:
	// a host whose key is not in it is refused, never trusted on first use.
	KnownHosts string
	// Credential is a private key (PEM or OpenSSH format, any key type the ssh
	// package reads: Ed25519, ECDSA, RSA) or, when it is not one, a password.
	Credential string
	// KeyFile is a file holding a private key, used when Credential is empty.
	KeyFile string
	// Passphrase decrypts an encrypted private key.
	Passphrase string
	// DialTimeout bounds the connection and the handshake; zero means
	// DefaultDialTimeout.
	DialTimeout time.Duration
}

// clientConfig checks c and returns the address to dial and the client
// configuration: host keys pinned by the known_hosts file, the key algorithms
// the file holds for the host preferred, the credential as the one method.
func (c Conn) clientConfig() (string, *gossh.ClientConfig, error) {
	switch {
	case c.Addr == "":
		return "", nil, errors.New("Addr is not set; set it to the host, such as \"build.example.com\" or \"10.0.0.5:2222\"")
	case c.User == "":
		return "", nil, errors.New("User is not set; set it to the remote user")
	case c.KnownHosts == "":
		return "", nil, errors.New("KnownHosts is not set: the host's key must be pinned; write it to a known_hosts file (ssh-keyscan HOST > known_hosts, then compare its fingerprint with the host's) and set KnownHosts to that file")
	}
	addr := c.Addr
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(strings.Trim(addr, "[]"), "22")
	}
	if _, err := os.Stat(c.KnownHosts); err != nil {
		return "", nil, fmt.Errorf("known_hosts file: %w", err)
	}
	hostKeys, err := knownhosts.New(c.KnownHosts)
	if err != nil {
		return "", nil, fmt.Errorf("known_hosts file %q: %w", c.KnownHosts, err)
	}
	auth, err := c.authMethod()
	if err != nil {
		return "", nil, err
	}
	timeout := c.DialTimeout
	if timeout == 0 {
		timeout = DefaultDialTimeout
	}
	cfg := &gossh.ClientConfig{
		User:              c.User,
		Auth:              []gossh.AuthMethod{auth},
		HostKeyCallback:   hostKeyCallback(hostKeys),
		HostKeyAlgorithms: knownAlgorithms(hostKeys, addr),
		Timeout:           timeout,
	}
	return addr, cfg, nil
}

// hostKeyCallback turns the errors of the known_hosts check into ones that say
// what to do.
func hostKeyCallback(check gossh.HostKeyCallback) gossh.HostKeyCallback {
	return func(host string, remote net.Addr, key gossh.PublicKey) error {
		err := check(host, remote, key)
		var ke *knownhosts.KeyError
		var re *knownhosts.RevokedError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &re):
			return &HostKeyError{Host: host, Fingerprint: gossh.FingerprintSHA256(key), Reason: "its key is revoked in the known_hosts file"}
		case errors.As(err, &ke) && len(ke.Want) > 0:
			return &HostKeyError{Host: host, Fingerprint: gossh.FingerprintSHA256(key), Reason: "its key differs from the one in the known_hosts file: the host was reinstalled, or someone is in between; check with the host's administrator before changing the file"}
		case errors.As(err, &ke):
			return &HostKeyError{Host: host, Fingerprint: gossh.FingerprintSHA256(key), Reason: "it is not in the known_hosts file; add its key after checking this fingerprint with the host's administrator"}
		}
		return err
	}
}

// knownAlgorithms lists the key algorithms the known_hosts file holds for
// addr, so that the host presents a key that can be checked; nil when it holds
// none (the connection then fails with a HostKeyError).
func knownAlgorithms(check gossh.HostKeyCallback, addr string) []string {
	// A key of no known type draws a KeyError listing the known keys.
	err := check(addr, &net.TCPAddr{IP: net.IPv4zero}, probeKey{})
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, k := range ke.Want {
		t := k.Key.Type()
		names := []string{t}
		if t == gossh.KeyAlgoRSA {
			names = []string{gossh.KeyAlgoRSASHA512, gossh.KeyAlgoRSASHA256, gossh.KeyAlgoRSA}
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				algos = append(algos, n)
			}
		}
	}
	return algos
}

// probeKey is a public key that matches no known one.
type probeKey struct{}

func (probeKey) Type() string                          { return "mcs-probe" }
func (probeKey) Marshal() []byte                       { return []byte("mcs-probe") }
func (probeKey) Verify([]byte, *gossh.Signature) error { return errors.New("probe key") }

// HostKeyError reports a host whose key is not pinned by the known_hosts file,
// or differs from the pinned one. Nothing was sent to the host.
type HostKeyError struct {
	// Host is the address as dialled.
	Host string
	// Fingerprint is the SHA-256 fingerprint of the key the host presented.
	Fingerprint string
	// Reason says what is wrong and what to do.
	Reason string
}

func (e *HostKeyError) Error() string {
	return fmt.Sprintf("host %s (key %s) refused: %s", e.Host, e.Fingerprint, e.Reason)
}

// authMethod returns the one way to log in: the private key, or the password.
func (c Conn) authMethod() (gossh.AuthMethod, error) {
	secret := c.Credential
	what := "the credential"
	if secret == "" && c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("key file: %w", err)
		}
		secret, what = string(b), "the key file "+fmt.Sprintf("%q", c.KeyFile)
		if !strings.Contains(secret, "PRIVATE KEY-----") {
			return nil, fmt.Errorf("%s holds no private key (PEM or OpenSSH format)", what)
		}
	}
	if secret == "" {
		return nil, errors.New("no credential: set Credential (a private key or a password) or KeyFile")
	}
	if !strings.Contains(secret, "PRIVATE KEY-----") {
		return gossh.Password(secret), nil
	}
	var signer gossh.Signer
	var err error
	if c.Passphrase != "" {
		signer, err = gossh.ParsePrivateKeyWithPassphrase([]byte(secret), []byte(c.Passphrase))
	} else {
		signer, err = gossh.ParsePrivateKey([]byte(secret))
	}
	var missing *gossh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("the private key of %s is encrypted; set Passphrase", what)
	case err != nil:
		// The parser's message names no part of the key.
		return nil, fmt.Errorf("the private key of %s cannot be read: %v", what, err)
	}
	return gossh.PublicKeys(signer), nil
}

// client holds one connection to the host, dialled on first use and again
// after it breaks. It is safe for concurrent use.
type client struct {
	addr string
	cfg  *gossh.ClientConfig

	mu     sync.Mutex
	c      *gossh.Client
	closed bool
}

func newClient(c Conn) (*client, error) {
	addr, cfg, err := c.clientConfig()
	if err != nil {
		return nil, err
	}
	return &client{addr: addr, cfg: cfg}, nil
}

// get returns the connection, dialling it when there is none.
func (cl *client) get(ctx context.Context) (*gossh.Client, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.closed {
		return nil, errors.New("the driver is closed")
	}
	if cl.c != nil {
		return cl.c, nil
	}
	d := net.Dialer{Timeout: cl.cfg.Timeout}
	nc, err := d.DialContext(ctx, "tcp", cl.addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cl.addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	} else {
		nc.SetDeadline(time.Now().Add(cl.cfg.Timeout))
	}
	conn, chans, reqs, err := gossh.NewClientConn(nc, cl.addr, cl.cfg)
	if err != nil {
		nc.Close()
		var hk *HostKeyError
		if errors.As(err, &hk) {
			return nil, hk
		}
		return nil, fmt.Errorf("log in to %s as %s: %w", cl.addr, cl.cfg.User, err)
	}
	nc.SetDeadline(time.Time{})
	cl.c = gossh.NewClient(conn, chans, reqs)
	go func(c *gossh.Client) {
		c.Wait()
		cl.mu.Lock()
		if cl.c == c {
			cl.c = nil
		}
		cl.mu.Unlock()
	}(cl.c)
	return cl.c, nil
}

// drop forgets c after it failed, so that the next call dials again.
func (cl *client) drop(c *gossh.Client) {
	cl.mu.Lock()
	if cl.c == c {
		cl.c = nil
	}
	cl.mu.Unlock()
	c.Close()
}

func (cl *client) close() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.closed = true
	if cl.c != nil {
		err := cl.c.Close()
		cl.c = nil
		return err
	}
	return nil
}

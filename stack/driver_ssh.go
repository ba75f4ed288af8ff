package stack

import (
	"context"
	"fmt"
	"os"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/middleware/auth"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "ssh",
		Summary: "commands on a remote host over SSH (addr, user, known_hosts, credentials, key_file, timeout, max_timeout, max_output_bytes)",
		Decode:  decodeSSH,
	})
	RegisterDriverType(DriverType{
		Name:    "sftp",
		Summary: "the files under one directory of a remote host, over SFTP (addr, user, known_hosts, credentials, key_file, root, read_only, allow_delete, max_read_bytes)",
		Decode:  decodeSFTP,
	})
}

var (
	_ DriverConfig = (*sshDriver)(nil)
	_ DriverConfig = (*sftpDriver)(nil)
)

// sshLogin is what the ssh and sftp types share: the host and how to log in.
type sshLogin struct {
	label string
	conn  ssh.Conn // without the credential, which is read at Build
	env   bool     // the credential is in MCS_TOKEN_<LABEL>
}

// decodeLogin reads the keys of the host and the login:
//
//	addr = "build.example.com:22"
//	user = "deploy"
//	known_hosts = "./known_hosts"   # required; relative to the stack file
//	credentials = "env"             # MCS_TOKEN_<LABEL>: a private key or a password (the default)
//	key_file = "./id_ed25519"       # or a private key file; its passphrase, if any, in MCS_TOKEN_<LABEL>_PASSPHRASE
func decodeLogin(t *Table, label string) sshLogin {
	l := sshLogin{label: label}
	l.conn.Addr = t.String("addr")
	if !t.Has("addr") {
		t.Errorf("", "has no addr; add addr = \"host.example.com\" (the host, with an optional :port)")
	}
	l.conn.User = t.String("user")
	if !t.Has("user") {
		t.Errorf("", "has no user; add user = \"deploy\" (the remote user)")
	}
	l.conn.KnownHosts = t.Path("known_hosts")
	if !t.Has("known_hosts") {
		t.Errorf("", "has no known_hosts; add known_hosts = \"./known_hosts\", a file that pins the host's key (ssh-keyscan HOST > known_hosts, then compare the fingerprint with the host's)")
	}
	l.conn.KeyFile = t.Path("key_file")
	l.conn.DialTimeout = t.Duration("dial_timeout")
	switch mode := t.String("credentials"); {
	case mode == "env" && l.conn.KeyFile == "", mode == "" && l.conn.KeyFile == "":
		l.env = true
	case mode == "key_file" && l.conn.KeyFile == "":
		t.Errorf("credentials", "is \"key_file\", but key_file is not set; add key_file = \"./id_ed25519\"")
	case mode == "" || mode == "key_file":
	case mode == "env":
		t.Errorf("credentials", "is \"env\", but key_file is set too; keep one of them")
	default:
		// The value is not shown: it may be the credential itself.
		t.Errorf("credentials", "is not a credential source; use \"env\" (a private key or a password in %s) or set key_file", auth.EnvVarName(label))
	}
	return l
}

// resolve completes the login with the credential from the environment.
func (l sshLogin) resolve() (ssh.Conn, error) {
	c := l.conn
	if l.env {
		name := auth.EnvVarName(l.label)
		c.Credential = os.Getenv(name)
		if c.Credential == "" {
			return c, fmt.Errorf("credentials = \"env\", but %s is empty; set it to a private key or a password, or set key_file", name)
		}
	} else {
		c.Passphrase = os.Getenv(auth.EnvVarName(l.label) + "_PASSPHRASE")
	}
	return c, nil
}

// effects: the credential the driver sends.
func (l sshLogin) effects(e Effect) []Effect {
	e.Kind = EffectCredential
	if l.env {
		e.Path, e.Env = "env", []string{auth.EnvVarName(l.label)}
	} else {
		e.Path, e.Env = l.conn.KeyFile, []string{auth.EnvVarName(l.label) + "_PASSPHRASE"}
	}
	return []Effect{e}
}

type sshDriver struct {
	login sshLogin
	cfg   ssh.Config
}

// decodeSSH reads a [[driver]] table of type "ssh": the keys of decodeLogin and
//
//	timeout = "30s"
//	max_timeout = "5m"
//	max_output_bytes = 65536
func decodeSSH(t *Table, label string) DriverConfig {
	d := &sshDriver{login: decodeLogin(t, label)}
	d.cfg.Timeout = t.Duration("timeout")
	d.cfg.MaxTimeout = t.Duration("max_timeout")
	d.cfg.MaxOutputBytes = int(t.Int("max_output_bytes", 256, 1<<30))
	return d
}

func (d *sshDriver) config() (ssh.Config, error) {
	cfg := d.cfg
	var err error
	cfg.Conn, err = d.login.resolve()
	return cfg, err
}

func (d *sshDriver) ToolDriver(context.Context, *Builder) (mcs.ToolDriver, error) {
	cfg, err := d.config()
	if err != nil {
		return nil, err
	}
	return ssh.NewToolDriver(cfg)
}

func (d *sshDriver) Driver(_ context.Context, _ *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	cfg, err := d.config()
	if err != nil {
		return nil, err
	}
	return ssh.New(cfg, opts...)
}

func (d *sshDriver) effects(e Effect) []Effect { return d.login.effects(e) }

type sftpDriver struct {
	login sshLogin
	cfg   ssh.SFTPConfig
}

// decodeSFTP reads a [[driver]] table of type "sftp": the keys of decodeLogin
// and
//
//	root = "/srv/data"      # required; absolute, on the host
//	read_only = true
//	allow_delete = false
//	max_read_bytes = 1048576
func decodeSFTP(t *Table, label string) DriverConfig {
	d := &sftpDriver{login: decodeLogin(t, label)}
	d.cfg.Root = t.String("root")
	if !t.Has("root") {
		t.Errorf("", "has no root; add root = \"/srv/data\" (the directory on the host the tools may use)")
	}
	d.cfg.ReadOnly = t.Bool("read_only")
	d.cfg.AllowDelete = t.Bool("allow_delete")
	d.cfg.MaxReadBytes = t.Int("max_read_bytes", 8, 1<<30)
	return d
}

func (d *sftpDriver) config() (ssh.SFTPConfig, error) {
	cfg := d.cfg
	var err error
	cfg.Conn, err = d.login.resolve()
	return cfg, err
}

func (d *sftpDriver) ToolDriver(context.Context, *Builder) (mcs.ToolDriver, error) {
	cfg, err := d.config()
	if err != nil {
		return nil, err
	}
	return ssh.NewSFTPToolDriver(cfg)
}

func (d *sftpDriver) Driver(_ context.Context, _ *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	cfg, err := d.config()
	if err != nil {
		return nil, err
	}
	return ssh.NewSFTP(cfg, opts...)
}

func (d *sftpDriver) effects(e Effect) []Effect { return d.login.effects(e) }

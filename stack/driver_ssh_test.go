package stack

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/internal/sshtest"
)

func TestSSHParseErrors(t *testing.T) {
	tests := []struct {
		name, file string
		want       []string
	}{
		{
			name: "missing keys",
			file: "[[driver]]\nlabel = \"box\"\ntype = \"ssh\"\n",
			want: []string{
				`s.toml:1: [[driver]] "box": has no addr; add addr = "host.example.com" (the host, with an optional :port)`,
				`s.toml:1: [[driver]] "box": has no user; add user = "deploy" (the remote user)`,
				`s.toml:1: [[driver]] "box": has no known_hosts; add known_hosts = "./known_hosts", a file that pins the host's key (ssh-keyscan HOST > known_hosts, then compare the fingerprint with the host's)`,
			},
		},
		{
			name: "bad credentials",
			file: "[[driver]]\nlabel = \"box\"\ntype = \"sftp\"\naddr = \"h\"\nuser = \"u\"\nknown_hosts = \"k\"\ncredentials = \"agent\"\n",
			want: []string{
				`s.toml:1: [[driver]] "box": has no root; add root = "/srv/data" (the directory on the host the tools may use)`,
				`s.toml:7: [[driver]] "box", key "credentials": is not a credential source; use "env" (a private key or a password in MCS_TOKEN_BOX) or set key_file`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("s.toml", []byte(tc.file))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			if diff := cmp.Diff(tc.want, problems(t, err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSSHAndSFTPBuild(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "a.txt"), []byte("remote file"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCS_TOKEN_BOX", srv.Password)
	t.Setenv("MCS_TOKEN_FILES", srv.Password)
	path := filepath.Join(dir, "stack.toml")
	file := "[[driver]]\nlabel = \"box\"\ntype = \"ssh\"\naddr = \"" + srv.Addr + "\"\nuser = \"" + srv.User + "\"\nknown_hosts = \"" + srv.KnownHosts + "\"\n" +
		"[[driver]]\nlabel = \"files\"\ntype = \"sftp\"\naddr = \"" + srv.Addr + "\"\nuser = \"" + srv.User + "\"\nknown_hosts = \"" + srv.KnownHosts + "\"\nroot = \"" + data + "\"\nread_only = true\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	wantEffects := []Effect{
		{Kind: EffectCredential, Table: `[[driver]] "box"`, Line: 1, Path: "env", Env: []string{"MCS_TOKEN_BOX"}},
		{Kind: EffectCredential, Table: `[[driver]] "files"`, Line: 7, Path: "env", Env: []string{"MCS_TOKEN_FILES"}},
	}
	if diff := cmp.Diff(wantEffects, s.Effects()); diff != "" {
		t.Errorf("effects (-want +got):\n%s", diff)
	}
	d, err := s.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	td := d.(mcs.ToolDriver)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"box__run_command", map[string]any{"argv": []any{"echo", "hi"}}, `"stdout":"hi\n"`},
		{"files__read_file", map[string]any{"path": "a.txt"}, `"content":"remote file"`},
	} {
		res, err := td.ExecuteTool(context.Background(), c.tool, c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s = %s, want %s", c.tool, b, c.want)
		}
		if strings.Contains(string(b), srv.Password) {
			t.Errorf("%s shows the password", c.tool)
		}
	}
}

func TestSSHMissingCredential(t *testing.T) {
	srv := sshtest.Start(t, sshtest.Options{})
	t.Setenv("MCS_TOKEN_BOX", "")
	s, err := Parse(filepath.Join(t.TempDir(), "s.toml"), []byte("[[driver]]\nlabel = \"box\"\ntype = \"ssh\"\naddr = \""+srv.Addr+"\"\nuser = \"u\"\nknown_hosts = \""+srv.KnownHosts+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "MCS_TOKEN_BOX is empty") {
		t.Errorf("Build error = %v", err)
	}
}

// A private key pasted into the stack file is refused, and not shown.
func TestSSHKeyInStackFileRefused(t *testing.T) {
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
	file := "[[driver]]\nlabel = \"box\"\ntype = \"ssh\"\naddr = \"h\"\nuser = \"u\"\nknown_hosts = \"k\"\ncredentials = \"\"\"" + key + "\"\"\"\n"
	_, err := Parse("s.toml", []byte(file))
	if err == nil || !strings.Contains(err.Error(), "holds a private key; secrets never go in the stack file") {
		t.Fatalf("Parse error = %v", err)
	}
	if strings.Contains(err.Error(), "b3BlbnNzaC1rZXkt") {
		t.Errorf("the error shows the key: %v", err)
	}
}

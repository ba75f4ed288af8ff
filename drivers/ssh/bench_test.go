package ssh_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/internal/drivertest"
	"github.com/mcs-go/mcs/internal/sshtest"
)

// BenchmarkSFTPReadFile reads a file of 1 MiB with read_file over SFTP on
// loopback.
func BenchmarkSFTPReadFile(b *testing.B) {
	srv := sshtest.Start(b, sshtest.Options{})
	root := b.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef\n"), (1<<20)/17+1)[:1<<20]
	if err := os.WriteFile(filepath.Join(root, "big.txt"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	td := drivertest.Open(b, ssh.NewSFTPToolDriver, ssh.SFTPConfig{
		Conn: ssh.Conn{Addr: srv.Addr, User: srv.User, KnownHosts: srv.KnownHosts, Credential: srv.Password},
		Root: root, MaxReadBytes: 1 << 20,
	})
	ctx := context.Background()
	args := map[string]any{"path": "big.txt"}
	if _, err := td.ExecuteTool(ctx, "read_file", args); err != nil { // connect
		b.Fatal(err)
	}
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		res, err := td.ExecuteTool(ctx, "read_file", args)
		if err != nil {
			b.Fatal(err)
		}
		if res.(map[string]any)["truncated"] != false {
			b.Fatalf("result cut: %v", res.(map[string]any)["notice"])
		}
	}
}

// BenchmarkRunCommand runs "true" over SSH on loopback.
func BenchmarkRunCommand(b *testing.B) {
	srv := sshtest.Start(b, sshtest.Options{})
	td := drivertest.Open(b, ssh.NewToolDriver, ssh.Config{Conn: ssh.Conn{Addr: srv.Addr, User: srv.User, KnownHosts: srv.KnownHosts, Credential: srv.Password}})
	ctx := context.Background()
	args := map[string]any{"argv": []any{"true"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := td.ExecuteTool(ctx, "run_command", args); err != nil {
			b.Fatal(err)
		}
	}
}

package ssh_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/mcs-go/mcs/drivers/ssh"
	"github.com/mcs-go/mcs/internal/sshtest"
)

// The model runs a program on a remote host; its arguments reach the program
// as given, a shell command in one of them included.
func Example() {
	dir, err := os.MkdirTemp("", "mcs-ssh-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := sshtest.New(dir, sshtest.Options{}) // an SSH server on loopback
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	d, err := ssh.New(ssh.Config{Conn: ssh.Conn{
		Addr:       srv.Addr,
		User:       srv.User,
		KnownHosts: srv.KnownHosts, // the host's key, pinned
		Credential: srv.Password,   // or a private key
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	reply := `{"tool":"run_command","arguments":{"argv":["echo","hello;","$(id)"]}}`
	for _, c := range d.ProcessLLMResponse(context.Background(), reply).Calls {
		b, _ := json.Marshal(c.Result)
		fmt.Println(c.Name, string(b), c.Err)
	}
	// Output:
	// run_command {"exit_code":0,"stdout":"hello; $(id)\n","stderr":"","timed_out":false,"truncated":false} <nil>
}

// The model reads a file of a remote directory over SFTP, and tries to leave it.
func ExampleNewSFTP() {
	dir, err := os.MkdirTemp("", "mcs-sftp-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := sshtest.New(dir, sshtest.Options{}) // an SSH server on loopback
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	root := dir + "/data"
	if err := os.Mkdir(root, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(root+"/notes.txt", []byte("Buy milk.\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	d, err := ssh.NewSFTP(ssh.SFTPConfig{
		Conn:     ssh.Conn{Addr: srv.Addr, User: srv.User, KnownHosts: srv.KnownHosts, Credential: srv.Password},
		Root:     root,
		ReadOnly: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	for _, reply := range []string{
		`{"tool":"read_file","arguments":{"path":"notes.txt"}}`,
		`{"tool":"read_file","arguments":{"path":"../../etc/passwd"}}`,
	} {
		for _, c := range d.ProcessLLMResponse(context.Background(), reply).Calls {
			if c.Err != nil {
				fmt.Println(c.Name, "failed:", c.Err)
				continue
			}
			b, _ := json.Marshal(c.Result)
			fmt.Println(c.Name, string(b))
		}
	}
	// Output:
	// read_file {"content":"Buy milk.\n","encoding":"utf-8","offset":0,"path":"notes.txt","size":10,"truncated":false}
	// read_file failed: read_file: path "../../etc/passwd" refused: its ".." segments lead above the root directory; use a path inside the root, relative to it
}

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

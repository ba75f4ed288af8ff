package ssh_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcs-go/mcs/drivers/ssh"
)

// FuzzQuote checks that a POSIX shell given the quoted line hands the program
// exactly the arguments, whatever they hold.
func FuzzQuote(f *testing.F) {
	for _, seed := range [][2]string{
		{"plain", ""},
		{"; rm -rf /", "$(id)"},
		{"`id`", "a'b\"c"},
		{"'", "''"},
		{"x\ny\r\n", "\\"},
		{"*", "~root"},
		{"$HOME${PATH}$$", "!!"},
		{"-e", "--"},
		{"\t \v", "é✓"},
	} {
		f.Add(seed[0], seed[1])
	}
	shells := []string{"/bin/sh"}
	if p, err := exec.LookPath("bash"); err == nil {
		shells = append(shells, p)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		line, err := ssh.Quote([]string{"printf", `%s\n---\n`, a, b})
		if strings.ContainsRune(a+b, 0) {
			if err == nil {
				t.Fatalf("Quote accepted a NUL byte: %q", line)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range shells {
			out, err := exec.Command(sh, "-c", line).Output()
			if err != nil {
				t.Fatalf("%s -c %q: %v", sh, line, err)
			}
			if want := a + "\n---\n" + b + "\n---\n"; string(out) != want {
				t.Errorf("%s gave the program %q, want %q", sh, out, want)
			}
		}
	})
}

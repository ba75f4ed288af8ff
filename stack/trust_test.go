package stack_test

import (
	"fmt"
	"testing"

	"github.com/mcs-go/mcs/stack"
)

// ExampleStack_Effects lists what a stack file starts and writes before it is
// built: a program that found the file by itself shows them and asks first.
func ExampleStack_Effects() {
	st, err := stack.Parse("project/mcs.toml", []byte(`
[[driver]]
label = "gh"
type = "mcp"
command = ["npx", "-y", "@modelcontextprotocol/server-github"]
env_pass = ["GITHUB_PERSONAL_ACCESS_TOKEN"]

[[driver]]
label = "notes"
type = "filesystem"
root = "notes"

[middleware.hooks]
audit_log = "/var/log/mcs.jsonl"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range st.Effects() {
		fmt.Println(e)
	}
	// Output:
	// [[driver]] "gh" (line 2) starts ["npx" "-y" "@modelcontextprotocol/server-github"] with GITHUB_PERSONAL_ACCESS_TOKEN
	// [[driver]] "notes" (line 8) writes project/notes
	// [middleware.hooks] writes /var/log/mcs.jsonl
}

// TestEffectsNone: a stack of read-only drivers and an audit log on stderr
// starts and writes nothing.
func TestEffectsNone(t *testing.T) {
	st, err := stack.Parse("mcs.toml", []byte(`
[[driver]]
label = "files"
type = "filesystem"
root = "."
read_only = true

[[driver]]
label = "api"
type = "rest"
spec = "openapi.json"
credentials = "device"
[driver.oauth]
client_id = "x"
device_auth_url = "https://example.com/device"
token_url = "https://example.com/token"
token_store = "tokens.json"

[middleware.hooks]
audit_log = "-"
`))
	if err != nil {
		t.Fatal(err)
	}
	got := st.Effects()
	if len(got) != 1 || got[0].Kind != stack.EffectWrite || got[0].Path != "tokens.json" {
		t.Errorf("Effects() = %v; want only the token store", got)
	}
}

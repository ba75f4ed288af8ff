package stack

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLoadBuild loads and builds a stack of three drivers (REST over a
// small local document, filesystem, CSV) behind an orchestrator, with hooks
// writing an audit file, permission and auth, and closes it; once per
// iteration. Building an orchestrated stack lists every driver's tools, so the
// REST document is read and parsed each time.
func BenchmarkLoadBuild(b *testing.B) {
	path := writeFixture(b, `[[driver]]
label = "pets"
type = "rest"
spec = "petstore.json"
credentials = "env"

[[driver]]
label = "files"
type = "filesystem"
root = "data"
read_only = true

[[driver]]
label = "tables"
type = "csv"
root = "data"

[orchestrator]
strategy = ["namespacing"]

[middleware]
order = ["hooks", "permission", "auth"]
[middleware.hooks]
audit_log = "audit.jsonl"
[middleware.permission]
allow = ["files__*", "tables__*", "pets__find*"]
deny = ["*delete*"]
`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Build(ctx); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// largeStack returns a stack file of n REST drivers, each a [[driver]] table
// of ten keys with an inline table, about 260 bytes a driver (4,000 drivers
// are about 1 MiB).
func largeStack(n int) []byte {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, `[[driver]]
label = "api%d"
type = "rest"
spec = "specs/api%d.json"
base_url = "https://api%d.example.com/v1"
include_tags = ["pets", "store", "user"]
include_paths = ["/pets/{petId}"]
headers = {X-Team = "core", Accept = "application/json"}
credentials = "env"
timeout = "15s"
max_name_length = 56

`, i, i, i)
	}
	sb.WriteString("[orchestrator]\nstrategy = [\"namespacing\"]\n")
	return []byte(sb.String())
}

// BenchmarkParseLarge parses stack files of growing size; parsing is linear
// when the time per byte (and the allocations per driver) stay the same from
// one size to the next.
func BenchmarkParseLarge(b *testing.B) {
	for _, n := range []int{500, 1000, 2000, 4000} {
		data := largeStack(n)
		b.Run(fmt.Sprintf("drivers=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				s, err := Parse("mcs.toml", data)
				if err != nil {
					b.Fatal(err)
				}
				if len(s.Drivers) != n {
					b.Fatalf("%d drivers, want %d", len(s.Drivers), n)
				}
			}
		})
	}
}

package stack

import (
	"context"
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

package stack

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
)

// The hooks middleware logs every call to Host.Audit too, redacted as its own
// audit log, also when audit_log is not set; a stack without hooks logs nothing.
func TestHostAuditGetsTheRecords(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("x,y\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, middleware string
		want             []string
	}{
		{"no audit_log", "[middleware.hooks]\nredact_keys = [\"path\"]\n", []string{"tool call", "args.path=[REDACTED]", "outcome=ok"}},
		{"audit_log to stderr", "[middleware.hooks]\naudit_log = \"-\"\n", []string{"tool call", "args.path=a.csv", "outcome=ok"}},
		{"no hooks", "[middleware]\norder = []\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "[[driver]]\nlabel = \"d\"\ntype = \"csv\"\nroot = " + auditTestQuote(dir) + "\n" + tc.middleware
			st, err := Parse(filepath.Join(dir, "s.toml"), []byte(file))
			if err != nil {
				t.Fatal(err)
			}
			var audit, stderr bytes.Buffer
			st.Host = Host{Audit: slog.New(slog.NewTextHandler(&audit, nil)), Stderr: &stderr}
			d, err := st.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := d.(mcs.ToolDriver).ExecuteTool(context.Background(), "read_csv_head", map[string]any{"path": "a.csv"}); err != nil {
				t.Fatal(err)
			}
			got := audit.String()
			if tc.want == nil && got != "" {
				t.Errorf("Host.Audit got %q, want nothing", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Host.Audit got %q, want it to hold %q", got, w)
				}
			}
		})
	}
}

func auditTestQuote(s string) string { return "'" + s + "'" }

// Package metatest checks, for every driver type of the module, that its meta
// advertises exactly the contracts a type assertion finds: mcs.DeriveCapabilities is
// the one rule, and no composition lies about what it can do.
package metatest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/csv"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/drivers/mail"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/orchestrator"
)

const spec = `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://127.0.0.1:1"}]
paths:
  /pets:
    get:
      operationId: listPets
      responses: {"200": {description: ok}}
`

// withHealth is a tool driver that has a Healthcheck and says so in its meta.
type withHealth struct{}

func (d withHealth) Meta() mcs.Meta { return mcs.DeriveCapabilities(mcs.Meta{ID: "test/health"}, d) }
func (withHealth) ListTools(context.Context) ([]mcs.Tool, error) {
	return []mcs.Tool{{Name: "t", Description: "t"}}, nil
}
func (withHealth) ExecuteTool(context.Context, string, map[string]any) (any, error) { return nil, nil }
func (withHealth) Healthcheck(context.Context) mcs.HealthResult {
	return mcs.HealthResult{Status: mcs.HealthError}
}

type metaer interface{ Meta() mcs.Meta }

func TestEveryDriverMetaIsHonest(t *testing.T) {
	dir := t.TempDir()
	must := func(v metaer, err error) metaer {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := v.(io.Closer); ok {
			t.Cleanup(func() { c.Close() })
		}
		return v
	}
	drivers := map[string]metaer{
		"BaseDriver over a healthchecked tool driver": mcs.NewBaseDriver(withHealth{}),
		"the healthchecked tool driver itself":        withHealth{},
		"orchestrator":                                orchestrator.New(nil),
		"rest tool driver":                            must(rest.NewToolDriver(rest.Config{Spec: []byte(spec)})),
		"rest driver":                                 must(rest.New(rest.Config{Spec: []byte(spec)})),
		"filesystem tool driver":                      must(filesystem.NewToolDriver(filesystem.Config{Root: dir})),
		"filesystem driver":                           must(filesystem.New(filesystem.Config{Root: dir})),
		"csv tool driver":                             must(csv.NewToolDriver(csv.Config{Root: dir})),
		"csv driver":                                  must(csv.New(csv.Config{Root: dir})),
		"mail tool driver":                            must(mail.NewToolDriver(mail.Config{IMAPAddr: "127.0.0.1:1", TLS: mail.TLSNone})),
		"mail driver":                                 must(mail.New(mail.Config{IMAPAddr: "127.0.0.1:1", TLS: mail.TLSNone})),
	}
	o := orchestrator.New(nil)
	if err := o.AddDriver("h", mcs.NewBaseDriver(withHealth{})); err != nil {
		t.Fatal(err)
	}
	drivers["orchestrator over a BaseDriver"] = o
	for name, d := range drivers {
		checkHonest(t, name, d)
	}
}

// checkHonest fails t when d's meta and a type assertion disagree about any
// capability flag.
func checkHonest(t *testing.T, name string, d metaer) {
	t.Helper()
	m := d.Meta()
	_, isDriver := d.(mcs.Driver)
	_, isToolDriver := d.(mcs.ToolDriver)
	_, isNative := d.(mcs.SupportsNativeTools)
	_, isStreaming := d.(mcs.SupportsStreaming)
	_, isMiddleware := d.(mcs.SupportsToolMiddleware)
	_, isHealth := d.(mcs.SupportsHealthcheck)
	for flag, implements := range map[mcs.Capability]bool{
		mcs.CapabilityStandalone:     isDriver,
		mcs.CapabilityOrchestratable: isToolDriver,
		mcs.CapabilityNativeTools:    isNative,
		mcs.CapabilityStreaming:      isStreaming,
		mcs.CapabilityToolMiddleware: isMiddleware,
		mcs.CapabilityHealthcheck:    isHealth,
	} {
		if m.HasCapability(flag) != implements {
			t.Errorf("%s: meta says %s=%v, the type assertion says %v", name, flag, m.HasCapability(flag), implements)
		}
	}
}

// TestOneErrorVocabulary: every driver of the module, and an orchestrator over
// them, reports an unknown tool with mcs.ErrUnknownTool and bad arguments with an
// *mcs.ArgumentsError, so that a client branches once for all of them.
func TestOneErrorVocabulary(t *testing.T) {
	dir := t.TempDir()
	r, err := rest.New(rest.Config{Spec: []byte(spec)})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := filesystem.New(filesystem.Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	c, err := csv.New(csv.Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := orchestrator.New(nil)
	for label, d := range map[string]mcs.ToolDriver{"rest": r, "fs": fs, "csv": c} {
		if err := o.AddDriver(label, d); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		d    mcs.ToolDriver
		tool string // a tool the driver publishes, called with a bogus argument
	}{
		{"rest", r, "listPets"},
		{"filesystem", fs, "read_file"},
		{"csv", c, "describe_csv"},
		{"orchestrator", o, "fs__read_file"},
	}
	ctx := context.Background()
	for _, tt := range tests {
		if _, err := tt.d.ExecuteTool(ctx, "no_such_tool", nil); !errors.Is(err, mcs.ErrUnknownTool) {
			t.Errorf("%s: unknown tool: %v does not wrap mcs.ErrUnknownTool", tt.name, err)
		}
		_, err := tt.d.ExecuteTool(ctx, tt.tool, map[string]any{"bogus": 1.0})
		if _, ok := errors.AsType[*mcs.ArgumentsError](err); !ok {
			t.Errorf("%s: bad arguments: %v is not an *mcs.ArgumentsError", tt.name, err)
		}
	}
}

// TestFileDriversAnnotateTheirTools: every tool of the file drivers carries its
// behaviour hints, and the hints never reach the model.
func TestFileDriversAnnotateTheirTools(t *testing.T) {
	dir := t.TempDir()
	fs, err := filesystem.New(filesystem.Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	c, err := csv.New(csv.Config{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := map[string]mcs.ToolAnnotations{
		"list_directory": {ReadOnly: true, Idempotent: true},
		"read_file":      {ReadOnly: true, Idempotent: true},
		"search_files":   {ReadOnly: true, Idempotent: true},
		"file_info":      {ReadOnly: true, Idempotent: true},
		"write_file":     {Destructive: true, Idempotent: true},
		"make_directory": {Idempotent: true},
		"move_file":      {Destructive: true},
		"delete_file":    {Destructive: true, Idempotent: true},

		"list_csv_files":           {ReadOnly: true, Idempotent: true},
		"describe_csv":             {ReadOnly: true, Idempotent: true},
		"read_csv_head":            {ReadOnly: true, Idempotent: true},
		"filter_csv_rows":          {ReadOnly: true, Idempotent: true},
		"summarize_numeric_column": {ReadOnly: true, Idempotent: true},
	}
	ctx := context.Background()
	for _, d := range []interface {
		mcs.Driver
		mcs.ToolDriver
		mcs.SupportsNativeTools
	}{fs, c} {
		tools, err := d.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools {
			w, ok := want[tool.Name]
			if !ok || tool.Annotations == nil || *tool.Annotations != w {
				t.Errorf("%s: annotations %+v, want %+v", tool.Name, tool.Annotations, w)
			}
		}
		msg, err := d.SystemMessage(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		native, err := mcs.NewBaseDriver(d, mcs.WithNativeTools(func(string) bool { return true })).NativeToolContext(ctx, "m")
		if err != nil {
			t.Fatal(err)
		}
		if all := msg + fmt.Sprint(native.Tools); strings.Contains(strings.ToLower(all), "readonly") || strings.Contains(strings.ToLower(all), "destructive\"") {
			t.Errorf("the annotations reached the model: %s", all)
		}
	}
}

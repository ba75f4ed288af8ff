// Package metatest runs the compositions of the module's drivers through the
// conformance kit (package mcstest), which checks among others that a meta
// advertises exactly the contracts a type assertion finds, and checks what the
// kit does not: the behaviour hints of the file drivers' tools. Each driver alone
// is run through the kit in its own package.
package metatest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/csv"
	"github.com/mcs-go/mcs/drivers/filesystem"
	"github.com/mcs-go/mcs/drivers/rest"
	"github.com/mcs-go/mcs/mcstest"
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
func (withHealth) ExecuteTool(_ context.Context, name string, _ map[string]any) (any, error) {
	if name != "t" {
		return nil, fmt.Errorf("%w: %q", mcs.ErrUnknownTool, name)
	}
	return "ok", nil
}
func (withHealth) Healthcheck(context.Context) mcs.HealthResult {
	return mcs.HealthResult{Status: mcs.HealthError}
}

// TestCompositionsConform runs the compositions of drivers through the
// conformance kit (each driver alone is run in its own package): a BaseDriver
// over a healthchecked tool driver, orchestrators empty, over a BaseDriver and
// over the REST, filesystem and CSV drivers, whose errors reach the caller in the
// one vocabulary (mcs.ErrUnknownTool, *mcs.ArgumentsError) through the
// orchestrator.
func TestCompositionsConform(t *testing.T) {
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
	all := orchestrator.New(nil)
	for label, d := range map[string]mcs.ToolDriver{"rest": r, "fs": fs, "csv": c} {
		if err := all.AddDriver(label, d); err != nil {
			t.Fatal(err)
		}
	}
	overBase := orchestrator.New(nil)
	if err := overBase.AddDriver("h", mcs.NewBaseDriver(withHealth{})); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		td     mcs.ToolDriver
		probes []mcstest.Probe
	}{
		{"the healthchecked tool driver itself", withHealth{}, []mcstest.Probe{{Tool: "t"}}},
		{"BaseDriver over a healthchecked tool driver", mcs.NewBaseDriver(withHealth{}), []mcstest.Probe{{Tool: "t"}}},
		{"empty orchestrator", orchestrator.New(nil), nil},
		{"orchestrator over a BaseDriver", overBase, []mcstest.Probe{{Tool: "t"}}},
		{"orchestrator over rest, filesystem and csv", all, []mcstest.Probe{
			{Tool: "fs__read_file", Args: map[string]any{"bogus": 1.0}, Invalid: true}}},
	}
	for _, tt := range tests {
		if err := mcstest.TestToolDriver(tt.td, tt.probes...); err != nil {
			t.Errorf("%s: %v", tt.name, err)
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

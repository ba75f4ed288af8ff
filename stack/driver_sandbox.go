package stack

import (
	"context"
	"maps"
	"slices"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/drivers/sandbox"
)

func init() {
	RegisterDriverType(DriverType{
		Name:    "sandbox",
		Summary: "shell commands in an isolated sandbox, files of its workspace (workspace, backend, network, timeout, max_timeout, max_output_bytes, memory, cpu, max_processes, max_disk, env, image)",
		Decode:  decodeSandbox,
	})
}

var _ DriverConfig = (*sandboxDriver)(nil)

type sandboxDriver struct{ cfg sandbox.Config }

// decodeSandbox reads a [[driver]] table of type "sandbox":
//
//	workspace = "./work"        # relative to the stack file; the only writable directory
//	backend = "bwrap"           # "bwrap" (default), "runsc", "docker"
//	network = false
//	timeout = "30s"
//	max_timeout = "5m"
//	max_output_bytes = 65536
//	memory = 536870912          # address space per process, bytes
//	cpu = "60s"
//	max_processes = 64
//	max_disk = 1073741824       # bytes a command may add to the workspace's file system
//	env = {GOFLAGS = "-mod=vendor"}
//	image = "debian:stable"     # docker only
func decodeSandbox(t *Table, _ string) DriverConfig {
	d := &sandboxDriver{}
	d.cfg.Workspace = t.Path("workspace")
	if !t.Has("workspace") {
		t.Errorf("", "has no workspace; add workspace = \"./work\" (the directory commands may write to)")
	}
	d.cfg.Backend = t.String("backend")
	switch d.cfg.Backend {
	case "", "bwrap", "runsc", "docker":
	default:
		t.Errorf("backend", "is %q; use \"bwrap\" (the default), \"runsc\" or \"docker\"", d.cfg.Backend)
	}
	d.cfg.Network = t.Bool("network")
	d.cfg.Timeout = t.Duration("timeout")
	d.cfg.MaxTimeout = t.Duration("max_timeout")
	d.cfg.MaxOutputBytes = int(t.Int("max_output_bytes", 256, 1<<30))
	d.cfg.Memory = t.Int("memory", 16<<20, 1<<40)
	d.cfg.CPU = t.Duration("cpu")
	d.cfg.MaxProcesses = int(t.Int("max_processes", 2, 1<<20))
	d.cfg.MaxDiskBytes = t.Int("max_disk", 1<<20, 1<<50)
	d.cfg.Env = t.StringMap("env")
	d.cfg.Image = t.String("image")
	if d.cfg.Image != "" && d.cfg.Backend != "docker" {
		t.Errorf("image", "is for the docker backend only; set backend = \"docker\" or remove image")
	}
	return d
}

func (d *sandboxDriver) ToolDriver(context.Context, *Builder) (mcs.ToolDriver, error) {
	return sandbox.NewToolDriver(d.cfg)
}

func (d *sandboxDriver) Driver(_ context.Context, _ *Builder, opts ...mcs.Option) (mcs.Driver, error) {
	return sandbox.New(d.cfg, opts...)
}

// effects: the sandbox starts the backend with the model's commands, in the
// workspace, which it writes.
func (d *sandboxDriver) effects(e Effect) []Effect {
	backend := d.cfg.Backend
	if backend == "" {
		backend = sandbox.DefaultBackend
	}
	p := e
	p.Kind, p.Command, p.Path = EffectProcess, []string{backend, "/bin/sh", "-c", "<the model's commands>"}, d.cfg.Workspace
	p.Env = slices.Sorted(maps.Keys(d.cfg.Env))
	e.Kind, e.Path = EffectWrite, d.cfg.Workspace
	return []Effect{p, e}
}

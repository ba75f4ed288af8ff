package stack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/drivers/mcp"
	"github.com/mcs-go/mcs/middleware/permission"
	"github.com/mcs-go/mcs/orchestrator"
)

// DriverType is a type of driver a stack file declares with type = "<Name>" in a
// [[driver]] table. Each built-in type lives in a file of its own in this package
// (driver_rest.go, ...) and registers itself with [RegisterDriverType].
type DriverType struct {
	// Name is the value of the type key, such as "rest".
	Name string
	// Summary is one line for help texts, such as "an OpenAPI or Swagger API".
	Summary string
	// Decode reads the keys of one [[driver]] table (label and type are read
	// already) and returns the driver it declares, not yet built. It records
	// every problem on t with the getters or [Table.Errorf]; Parse reports them
	// with t.Err, so Decode need not check t.Err itself, and its result is
	// ignored when t has errors.
	Decode func(t *Table, label string) DriverConfig
}

// DriverConfig is one decoded [[driver]] table, ready to build. Build calls
// exactly one of its methods per Build.
type DriverConfig interface {
	// ToolDriver builds the technical half of the driver, for a stack of several
	// drivers behind an orchestrator.
	ToolDriver(ctx context.Context, b *Builder) (mcs.ToolDriver, error)
	// Driver builds the complete driver with opts (the stack's middleware, native
	// tools) applied to its BaseDriver, for a stack of one driver.
	Driver(ctx context.Context, b *Builder, opts ...mcs.Option) (mcs.Driver, error)
}

// MiddlewareKind is a kind of middleware a stack file names in
// [middleware] order and configures in a [middleware.<Name>] table. Each
// built-in kind lives in a file of its own (middleware_hooks.go, ...) and
// registers itself with [RegisterMiddlewareKind].
type MiddlewareKind struct {
	// Name is the name in order and in the table header, such as "hooks".
	Name string
	// Summary is one line for help texts.
	Summary string
	// Rank places the kind in the recommended order (lower is outer), used when a
	// stack file gives no order: hooks 10, permission 20, auth 40.
	Rank int
	// Default puts the kind, with an empty table, into every stack whose file
	// gives no [middleware] order.
	Default bool
	// Decode reads the kind's table (empty when the file has none) and returns
	// the middleware it declares, not yet built; problems are recorded on t as
	// for [DriverType.Decode].
	Decode func(t *Table) MiddlewareConfig
}

// MiddlewareConfig is one decoded middleware table, ready to build.
type MiddlewareConfig interface {
	// Middleware builds the middleware. Resources it opens (an audit file) are
	// handed to [Builder.OnClose].
	Middleware(ctx context.Context, b *Builder) (mcs.ToolMiddleware, error)
}

// LayerKind is a resolution layer a stack file names in [orchestrator] strategy.
type LayerKind struct {
	// Name is the name in the strategy list, such as "namespacing".
	Name string
	// Summary is one line for help texts.
	Summary string
	// Decode reads the layer's settings from the [orchestrator] table (such as
	// page_size) and returns the layer.
	Decode func(t *Table) orchestrator.Layer
}

var registry = struct {
	sync.RWMutex
	drivers    map[string]DriverType
	middleware map[string]MiddlewareKind
	layers     map[string]LayerKind
}{drivers: map[string]DriverType{}, middleware: map[string]MiddlewareKind{}, layers: map[string]LayerKind{}}

// RegisterDriverType adds a driver type. It panics when the name is empty or
// taken, or Decode is nil: a mistake in the program, found at start-up. Safe for
// concurrent use; meant for init functions.
func RegisterDriverType(t DriverType) {
	registry.Lock()
	defer registry.Unlock()
	if t.Name == "" || t.Decode == nil {
		panic("stack: RegisterDriverType needs a Name and a Decode function")
	}
	if _, dup := registry.drivers[t.Name]; dup {
		panic("stack: driver type " + t.Name + " registered twice")
	}
	registry.drivers[t.Name] = t
}

// RegisterMiddlewareKind adds a middleware kind; it panics as
// [RegisterDriverType] does.
func RegisterMiddlewareKind(k MiddlewareKind) {
	registry.Lock()
	defer registry.Unlock()
	if k.Name == "" || k.Decode == nil {
		panic("stack: RegisterMiddlewareKind needs a Name and a Decode function")
	}
	if _, dup := registry.middleware[k.Name]; dup {
		panic("stack: middleware kind " + k.Name + " registered twice")
	}
	registry.middleware[k.Name] = k
}

// RegisterLayerKind adds an orchestrator layer; it panics as
// [RegisterDriverType] does.
func RegisterLayerKind(k LayerKind) {
	registry.Lock()
	defer registry.Unlock()
	if k.Name == "" || k.Decode == nil {
		panic("stack: RegisterLayerKind needs a Name and a Decode function")
	}
	if _, dup := registry.layers[k.Name]; dup {
		panic("stack: layer " + k.Name + " registered twice")
	}
	registry.layers[k.Name] = k
}

// DriverTypes returns the registered driver types sorted by name.
func DriverTypes() []DriverType {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]DriverType, 0, len(registry.drivers))
	for _, t := range registry.drivers {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MiddlewareKinds returns the registered middleware kinds in the recommended
// order (by Rank, then name).
func MiddlewareKinds() []MiddlewareKind {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]MiddlewareKind, 0, len(registry.middleware))
	for _, k := range registry.middleware {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rank != out[j].Rank {
			return out[i].Rank < out[j].Rank
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LayerKinds returns the registered orchestrator layers sorted by name.
func LayerKinds() []LayerKind {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]LayerKind, 0, len(registry.layers))
	for _, k := range registry.layers {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func lookupDriver(name string) (DriverType, bool) {
	registry.RLock()
	defer registry.RUnlock()
	t, ok := registry.drivers[name]
	return t, ok
}

func lookupMiddleware(name string) (MiddlewareKind, bool) {
	registry.RLock()
	defer registry.RUnlock()
	k, ok := registry.middleware[name]
	return k, ok
}

func lookupLayer(name string) (LayerKind, bool) {
	registry.RLock()
	defer registry.RUnlock()
	k, ok := registry.layers[name]
	return k, ok
}

func names[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	slices.Sort(out)
	return out
}

// Host is what the program that builds a stack provides to it: where consent is
// asked, where an audit log of "-" goes, the HTTP client of REST drivers. The
// zero Host asks nobody (calls no permission rule allows fail closed), audits
// "-" to os.Stderr and uses http.DefaultClient.
type Host struct {
	// Consent answers the calls a permission table with ask = true leaves open,
	// such as permission.Prompt(os.Stdin, os.Stderr).
	Consent permission.ConsentFunc
	// Stderr receives the audit log of audit_log = "-"; nil means os.Stderr.
	Stderr io.Writer
	// HTTPClient sends the requests of REST drivers and fetches their specs; nil
	// means http.DefaultClient.
	HTTPClient *http.Client
	// Sampling is the program's model, for MCP servers whose table has
	// sampling = true (their sampling requests are shown to Consent first),
	// such as Sampler(model); nil declines their requests.
	Sampling mcp.SamplingFunc
	// Audit, when set, receives a second audit trail from the stack's hooks
	// middleware: the records of [hooks.SlogAudit], redacted as the stack's
	// audit log is ([middleware.hooks] redact_keys, max_value_len), also when
	// audit_log is not set. A program shows them (a web console, live). A stack
	// without the hooks middleware logs nothing to it.
	Audit *slog.Logger
}

// Builder is what a [DriverConfig] or [MiddlewareConfig] gets while
// [Stack.Build] runs: the host's settings and a place for what must be closed
// with the stack. It is used by one Build at a time.
type Builder struct {
	host    Host
	closers []func() error
	// consent is the handler of the stack's permission middleware when it asks
	// (ask = true); drivers whose servers ask the user (MCP elicitation) get it
	// too. Middleware is built before the drivers.
	consent permission.ConsentFunc
	// approvals and approvalTTL are the stack's approval store and its ttl when
	// the permission middleware queues (ask = "queue"); opened before the
	// middleware is built.
	approvals   approvals.Store
	approvalTTL time.Duration
	// prefixed says the drivers' tools are published as <label>__<tool>
	// (namespacing with several drivers, or always_namespacing).
	prefixed bool
	// stack is the stack being built, for what its Builds share (sign-ins).
	stack *Stack
	// describers add to the arguments the consent handler shows (see
	// describedConsent); drivers register them while they are built.
	describers []describer
}

// maxToolName is the longest tool name providers accept, and the orchestrator
// publishes.
const maxToolName = 64

// nameBudget returns the longest tool name a driver labelled label should
// publish so that its names stay within maxToolName once prefixed, or 0 when
// its names are published as they are. A driver that shortens its own names
// keeps what it knows of the original name (the REST driver: the operationId,
// in the description); the orchestrator's shortening keeps only a hash.
func (b *Builder) nameBudget(label string) int {
	if !b.prefixed {
		return 0
	}
	return max(16, maxToolName-len(label)-len("__"))
}

// Host returns the host settings of the stack being built.
func (b *Builder) Host() Host { return b.host }

// OnClose registers f to run when the stack is closed, or at once when the
// Build fails; closers run in reverse order of registration.
func (b *Builder) OnClose(f func() error) { b.closers = append(b.closers, f) }

func unknownName(kind, got string, known []string) error {
	if near := nearest(got, known); near != "" {
		return fmt.Errorf("unknown %s %q; did you mean %q? use one of %v", kind, got, near, known)
	}
	return fmt.Errorf("unknown %s %q; use one of %v", kind, got, known)
}

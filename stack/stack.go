package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/mcs-go/mcs"
	"github.com/mcs-go/mcs/approvals"
	"github.com/mcs-go/mcs/orchestrator"
)

// DefaultFile is the stack file a program looks for in the current directory.
const DefaultFile = "mcs.toml"

// MaxFileBytes is the largest stack file Load reads.
const MaxFileBytes = 1 << 20

// Stack is a parsed stack file: the drivers it declares, how several of them are
// orchestrated and the middleware around them. [Stack.Build] turns it into a
// driver. The exported fields describe the file; only Host may be changed, before
// Build. A Stack is safe for concurrent use once built; Build and Close must not
// run concurrently with each other.
type Stack struct {
	// File is the name the stack was loaded or parsed under.
	File string
	// Drivers are the [[driver]] tables, in file order.
	Drivers []DriverDecl
	// Strategy is the [orchestrator] strategy, layers innermost first; nil when
	// the file has no [orchestrator] table.
	Strategy []string
	// Middleware are the middleware kinds, outermost first.
	Middleware []string
	// Approvals is the stack's approval store: the [approvals] table, or the
	// default of ask = "queue" in [middleware.permission]; nil when there is
	// neither. Open it with [Stack.ApprovalStore].
	Approvals *Approvals
	// Host is what the program provides to the built stack (consent, stderr, the
	// HTTP client). Set it before Build.
	Host Host

	layers []orchestrator.Layer
	mws    []MiddlewareConfig

	mu      sync.Mutex
	closers []func() error

	storeMu sync.Mutex
	store   approvals.Store // opened by ApprovalStore, closed by Close

	auth authState // the sign-ins: see auth.go
}

// DriverDecl is one [[driver]] table.
type DriverDecl struct {
	// Label names the driver; under an orchestrator its tools are label__tool.
	Label string
	// Type is the driver type, a name of [DriverTypes].
	Type string
	// Line is the line of the table in the file.
	Line int
	// Config is the decoded table, built by Build.
	Config DriverConfig
}

// Load reads and parses the stack file at path; relative paths in it resolve
// against its directory. Errors about the content are *[Error]s naming the file,
// the line and the key.
func Load(path string) (*Stack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("stack: open the stack file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("stack: read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("stack: %s is larger than %d bytes; a stack file is a short declaration, check the path", path, MaxFileBytes)
	}
	return Parse(path, data)
}

var labelPattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,32}$`)

// Parse parses a stack file held in data; name is used in errors and its
// directory is where relative paths resolve. Nothing is opened or contacted:
// that is Build's work. Every problem found is reported, each as an *[Error],
// joined with errors.Join.
//
// The file holds one or more [[driver]] tables (label, type and the keys of the
// type), an optional [orchestrator] table (strategy, layers innermost first, and
// the layers' settings), an optional [middleware] table (order, outermost
// first, and one [middleware.<kind>] table per kind) and an optional [approvals]
// table (store, ttl: where calls that wait for approval are kept). A value that looks like a
// credential is refused wherever it appears; the message says how to move it to
// the environment.
func Parse(name string, data []byte) (*Stack, error) {
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			key := ""
			if k := de.Key(); len(k) > 0 {
				key = joinKey(k)
			}
			return nil, &Error{File: name, Line: line, Key: key, Err: fmt.Errorf("not valid TOML: %s", trimTOML(de.Error()))}
		}
		return nil, &Error{File: name, Err: fmt.Errorf("not valid TOML: %w", err)}
	}
	pos := indexPositions(data)
	dir := filepath.Dir(name)
	root := newTable(name, dir, "", "", raw, pos)
	s := &Stack{File: name}
	var errs []error
	if err := checkSecrets(root, "", raw); err != nil {
		errs = append(errs, err)
	}
	s.parseDrivers(root, &errs)
	s.parseOrchestrator(root, &errs)
	s.parseMiddleware(root, &errs)
	s.parseApprovals(root)
	s.parseAuth(root)
	root.Has("driver")
	root.Has("orchestrator")
	root.Has("middleware")
	if err := root.Err(); err != nil {
		errs = append(errs, err)
	}
	if err := sortedJoin(errs); err != nil {
		return nil, err
	}
	return s, nil
}

// sortedJoin flattens errs into their *Errors, sorts them by line (stable, so
// the problems of one line keep their order) and joins them.
func sortedJoin(errs []error) error {
	var flat []error
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		flat = append(flat, err)
	}
	for _, e := range errs {
		walk(e)
	}
	slices.SortStableFunc(flat, func(a, b error) int {
		return lineOf(a) - lineOf(b)
	})
	return errors.Join(flat...)
}

func lineOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Line
	}
	return 0
}

func (s *Stack) parseDrivers(root *Table, errs *[]error) {
	v, ok := root.get("driver")
	list, isList := v.([]any)
	if !ok || !isList || len(list) == 0 {
		if ok && !isList {
			root.Errorf("driver", "must be an array of tables: write each driver as a [[driver]] table")
			return
		}
		*errs = append(*errs, &Error{File: s.File, Err: errors.New("declares no driver; add a [[driver]] table with a label and a type (" + typeList() + ")")})
		return
	}
	seen := map[string]int{}
	for i, e := range list {
		path := "driver[" + strconv.Itoa(i) + "]"
		m, _ := e.(map[string]any)
		t := newTable(s.File, root.dir, path, "[[driver]] #"+strconv.Itoa(i+1), m, root.pos)
		label := t.String("label")
		if label != "" {
			t.name = fmt.Sprintf("[[driver]] %q", label)
		}
		switch {
		case !t.Has("label"):
			t.Errorf("", "has no label; add label = \"name\" (letters, digits and '-', at most 32)")
		case label != "" && !labelPattern.MatchString(label):
			t.Errorf("label", "%q is not a valid label; use letters, digits and '-', at most 32", label)
		case seen[label] > 0:
			t.Errorf("label", "%q is already used by driver #%d; give each driver its own label", label, seen[label])
		}
		if label != "" {
			seen[label] = i + 1
		}
		typ := t.String("type")
		decl := DriverDecl{Label: label, Type: typ, Line: root.pos.line(path)}
		dt, known := lookupDriver(typ)
		switch {
		case !t.Has("type"):
			t.Errorf("", "has no type; add type = \"...\" (%s)", typeList())
		case !known && typ != "":
			t.Errorf("type", "%s", unknownName("driver type", typ, names(DriverTypes(), func(d DriverType) string { return d.Name })))
		case known:
			decl.Config = dt.Decode(t, label)
		}
		if known {
			if err := t.Err(); err != nil {
				*errs = append(*errs, err)
				continue
			}
		} else {
			// Without a type the other keys cannot be judged; report only the
			// table's own problems.
			for _, e := range t.errs {
				*errs = append(*errs, e)
			}
			continue
		}
		s.Drivers = append(s.Drivers, decl)
	}
}

func typeList() string {
	var out string
	for i, t := range DriverTypes() {
		if i > 0 {
			out += ", "
		}
		out += t.Name
	}
	return out
}

func (s *Stack) parseOrchestrator(root *Table, errs *[]error) {
	if !root.Has("orchestrator") {
		return
	}
	t := root.Sub("orchestrator", "[orchestrator]")
	strategy := t.Strings("strategy")
	if strategy == nil && !t.Has("strategy") {
		strategy = []string{"namespacing"}
	}
	s.Strategy = slices.Clone(strategy)
	if s.Strategy == nil {
		s.Strategy = []string{}
	}
	if slices.Contains(strategy, "namespacing") && slices.Contains(strategy, "always_namespacing") {
		t.Errorf("strategy", "\"namespacing\" and \"always_namespacing\" would prefix every name twice; keep one of them")
	}
	for _, name := range strategy {
		if name == "flat" {
			if len(strategy) > 1 {
				t.Errorf("strategy", "\"flat\" means no layers and cannot be combined with others; remove it or the others")
			}
			continue
		}
		k, ok := lookupLayer(name)
		if !ok {
			t.Errorf("strategy", "%s", unknownName("layer", name, append(names(LayerKinds(), func(l LayerKind) string { return l.Name }), "flat")))
			continue
		}
		if l := k.Decode(t); l != nil {
			s.layers = append(s.layers, l)
		}
	}
	// The settings of layers the strategy does not use are still known keys, so
	// that switching a layer off does not make its settings an error.
	for _, k := range LayerKinds() {
		if !slices.Contains(strategy, k.Name) {
			probe := newTable(t.file, t.dir, t.path, t.name, t.values, t.pos)
			k.Decode(probe)
			for key := range probe.asked {
				t.asked[key] = true
			}
		}
	}
}

func (s *Stack) parseMiddleware(root *Table, errs *[]error) {
	t := root.Sub("middleware", "[middleware]")
	kinds := MiddlewareKinds()
	var order []string
	if t.Has("order") {
		order = t.Strings("order")
		if order == nil {
			order = []string{}
		}
	} else {
		for _, k := range kinds {
			if k.Default || t.values[k.Name] != nil {
				order = append(order, k.Name)
			}
		}
	}
	seen := map[string]bool{}
	for _, name := range order {
		k, ok := lookupMiddleware(name)
		switch {
		case !ok:
			t.Errorf("order", "%s", unknownName("middleware", name, names(kinds, func(k MiddlewareKind) string { return k.Name })))
			continue
		case seen[name]:
			t.Errorf("order", "%q is listed twice; list each middleware once", name)
			continue
		}
		seen[name] = true
		sub := t.Sub(name, "[middleware."+name+"]")
		if mc := k.Decode(sub); mc != nil {
			s.mws = append(s.mws, mc)
		}
		s.Middleware = append(s.Middleware, name)
	}
	for key, v := range t.values {
		if key == "order" || seen[key] {
			continue
		}
		t.asked[key] = true
		if _, ok := v.(map[string]any); ok {
			if _, known := lookupMiddleware(key); known {
				t.Errorf(key, "is configured but not in order; add %q to [middleware] order or remove the table", key)
				continue
			}
		}
		t.Errorf(key, "%s", unknownName("middleware", key, names(kinds, func(k MiddlewareKind) string { return k.Name })))
	}
}

// Build builds the stack's drivers and middleware and returns one driver: the
// single declared driver as is, with the middleware installed on it, or, when the
// file declares several drivers or an [orchestrator] table, an
// *orchestrator.Orchestrator over their tool drivers with the middleware
// installed on the orchestrator (so permission patterns see label__tool names).
// The driver offers native tools for every model.
//
// Build opens what the drivers need (file roots, audit files) and, for an
// orchestrator, lists every driver's tools, which loads REST documents. When it
// fails, everything it opened is closed again and the error names the driver or
// middleware at fault. What a successful Build opened stays open until
// [Stack.Close]. Each Build builds new drivers.
func (s *Stack) Build(ctx context.Context) (mcs.Driver, error) {
	b := &Builder{host: s.Host, stack: s}
	d, err := s.build(ctx, b)
	if err != nil {
		runClosers(b.closers)
		return nil, err
	}
	s.mu.Lock()
	s.closers = append(s.closers, b.closers...)
	s.mu.Unlock()
	return d, nil
}

func (s *Stack) build(ctx context.Context, b *Builder) (mcs.Driver, error) {
	if len(s.Drivers) == 0 {
		return nil, fmt.Errorf("stack %s: no drivers to build", s.File)
	}
	if s.Approvals != nil && s.Approvals.Queue {
		store, err := s.ApprovalStore(ctx)
		if err != nil {
			return nil, err
		}
		b.approvals, b.approvalTTL = store, s.Approvals.TTL
	}
	mws := make([]mcs.ToolMiddleware, 0, len(s.mws))
	for i, mc := range s.mws {
		mw, err := mc.Middleware(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("stack %s: middleware %s: %w", s.File, s.Middleware[i], err)
		}
		mws = append(mws, mw)
	}
	opts := []mcs.Option{mcs.WithNativeTools(func(string) bool { return true })}
	if len(mws) > 0 {
		opts = append(opts, mcs.WithMiddleware(mws...))
	}
	if len(s.Drivers) == 1 && s.Strategy == nil {
		d := s.Drivers[0]
		drv, err := d.Config.Driver(ctx, b, opts...)
		if err != nil {
			return nil, fmt.Errorf("stack %s: driver %q (line %d): %w", s.File, d.Label, d.Line, err)
		}
		closeWith(b, drv)
		return drv, nil
	}
	b.prefixed = len(s.Drivers) > 1 && (s.Strategy == nil || slices.Contains(s.Strategy, "namespacing")) ||
		slices.Contains(s.Strategy, "always_namespacing")
	var strategy orchestrator.Strategy
	switch {
	case s.Strategy == nil:
		strategy = orchestrator.Pipeline(orchestrator.Namespacing())
	case len(s.layers) == 0:
		strategy = orchestrator.Flat()
	default:
		strategy = orchestrator.Pipeline(s.layers...)
	}
	o := orchestrator.New(strategy, opts...)
	entries := make([]orchestrator.Entry, 0, len(s.Drivers))
	for _, d := range s.Drivers {
		td, err := d.Config.ToolDriver(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("stack %s: driver %q (line %d): %w", s.File, d.Label, d.Line, err)
		}
		closeWith(b, td)
		entries = append(entries, orchestrator.Entry{Label: d.Label, Driver: td})
	}
	if err := o.AddDrivers(ctx, entries...); err != nil {
		return nil, fmt.Errorf("stack %s: %w", s.File, err)
	}
	return o, nil
}

// AsksConsent reports whether the built stack would ask [Host.Consent] about
// calls: its permission middleware has ask = true (ask = "queue" asks nobody:
// the calls wait in the approval store). A program whose terminal is
// not free to ask on (one that serves the stack over stdio) refuses such a
// stack before building it.
func (s *Stack) AsksConsent() bool {
	for _, mc := range s.mws {
		if a, ok := mc.(interface{ asks() bool }); ok && a.asks() {
			return true
		}
	}
	return false
}

// closeWith registers v's Close method, if it has one.
func closeWith(b *Builder, v any) {
	if c, ok := v.(io.Closer); ok {
		b.OnClose(c.Close)
	}
}

// Close releases what the Builds of the stack opened (file roots, audit files,
// the approval store, in reverse order) and returns their errors joined. The built drivers must not
// be used afterwards. Close is safe to call more than once.
func (s *Stack) Close() error {
	s.mu.Lock()
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	return runClosers(closers)
}

func runClosers(closers []func() error) error {
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func joinKey(k []string) string {
	out := ""
	for _, p := range k {
		out = join(out, p)
	}
	return out
}

// trimTOML drops the "toml: " prefix of go-toml's messages.
func trimTOML(s string) string {
	const p = "toml: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}

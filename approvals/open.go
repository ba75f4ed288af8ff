package approvals

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcs-go/mcs/internal/secreturl"
)

// OpenFunc opens the store a URL names, for [Open]; see [RegisterScheme].
type OpenFunc func(ctx context.Context, url string, opts ...Option) (Store, error)

var (
	schemesMu sync.RWMutex
	schemes   = map[string]OpenFunc{}
)

// storePackages names the packages of this module that register schemes, for
// the error of an [Open] whose store is not linked in.
var storePackages = map[string]string{
	"sqlite":     "sqlite",
	"postgres":   "postgres",
	"postgresql": "postgres",
}

// RegisterScheme makes [Open] open the URLs with scheme (the part before the
// first colon, matched without regard to case) with open, which receives the
// whole URL and the options. It is for store implementations, which call it
// from an init function so that a blank import links the store in, as with the
// drivers of database/sql: the SQLite store registers "sqlite", the PostgreSQL
// store "postgres" and "postgresql". It panics when scheme is empty, is
// "memory", or is registered already, or when open is nil. It is safe for
// concurrent use.
func RegisterScheme(scheme string, open OpenFunc) {
	key := strings.ToLower(scheme)
	if key == "" || strings.Contains(key, ":") {
		panic(fmt.Sprintf("approvals: RegisterScheme(%q): want a scheme without a colon", scheme))
	}
	if open == nil {
		panic(fmt.Sprintf("approvals: RegisterScheme(%q): nil open function", scheme))
	}
	schemesMu.Lock()
	defer schemesMu.Unlock()
	if _, dup := schemes[key]; dup || key == "memory" {
		panic(fmt.Sprintf("approvals: RegisterScheme(%q): the scheme is registered already", scheme))
	}
	schemes[key] = open
}

// Open opens the store a URL names:
//
//   - "memory:": [NewMemoryStore], always;
//   - "sqlite:PATH" (also "sqlite://PATH"): the SQLite store of package
//     github.com/mcs-go/mcs/approvals/sqlite on PATH, relative to the working
//     directory unless absolute;
//   - "postgres://..." or "postgresql://...": the PostgreSQL store of package
//     github.com/mcs-go/mcs/approvals/postgres, with the URL as DSN;
//   - any other scheme a store registered with [RegisterScheme].
//
// A store's package registers its schemes when it is imported; a program that
// opens stores by URL imports the ones it accepts, for their side effect:
//
//	import _ "github.com/mcs-go/mcs/approvals/sqlite"
//
// A URL of a known store whose package is not imported is an error that names
// the package to import; any other URL is an error that lists the accepted
// forms. Errors never echo a password in the URL.
func Open(ctx context.Context, url string, opts ...Option) (Store, error) {
	scheme, rest, ok := strings.Cut(url, ":")
	key := strings.ToLower(scheme)
	if ok && key == "memory" && rest == "" {
		return NewMemoryStore(opts...), nil
	}
	if ok {
		schemesMu.RLock()
		open := schemes[key]
		schemesMu.RUnlock()
		if open != nil {
			return open(ctx, url, opts...)
		}
		if pkg, known := storePackages[key]; known {
			return nil, fmt.Errorf("approvals: open %q: the %s store is not linked in; import _ \"github.com/mcs-go/mcs/approvals/%s\"", secreturl.Redact(url), pkg, pkg)
		}
	}
	return nil, fmt.Errorf("approvals: unsupported store URL %q: want %s", secreturl.Redact(url), acceptedForms())
}

// acceptedForms lists the URL forms Open accepts.
func acceptedForms() string {
	forms := []string{"sqlite:PATH", "postgres://... (or postgresql://...)"}
	schemesMu.RLock()
	for s := range schemes {
		if _, known := storePackages[s]; !known {
			forms = append(forms, s+":...")
		}
	}
	schemesMu.RUnlock()
	slices.Sort(forms[2:])
	return strings.Join(forms, ", ") + ", or memory:"
}

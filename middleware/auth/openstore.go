package auth

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/mcs-go/mcs/internal/secreturl"
)

// OpenStoreFunc opens the token store a URL names, for [OpenStore]; see
// [RegisterStoreScheme].
type OpenStoreFunc func(ctx context.Context, url string) (TokenStore, error)

var (
	storeSchemesMu sync.RWMutex
	storeSchemes   = map[string]OpenStoreFunc{}
)

// storeBackends names the packages of this module that register store schemes,
// for the error of an OpenStore whose store is not linked in.
var storeBackends = map[string]string{
	"sqlite":     "sqlite",
	"postgres":   "postgres",
	"postgresql": "postgres",
	"redis":      "redis",
	"rediss":     "redis",
}

// RegisterStoreScheme makes [OpenStore] open the URLs with scheme (the part
// before the first colon, without regard to case) with open. Store packages call
// it from an init function, so that a blank import links the store in:
//
//	import _ "github.com/mcs-go/mcs/middleware/auth/sqlite"
//
// It panics when scheme is empty, holds a colon, is "memory" or "file", or is
// registered already, or when open is nil. Safe for concurrent use.
func RegisterStoreScheme(scheme string, open OpenStoreFunc) {
	key := strings.ToLower(scheme)
	if key == "" || strings.Contains(key, ":") || key == "memory" || key == "file" {
		panic(fmt.Sprintf("auth: RegisterStoreScheme(%q): not a scheme a store may register", scheme))
	}
	if open == nil {
		panic(fmt.Sprintf("auth: RegisterStoreScheme(%q): nil open function", scheme))
	}
	storeSchemesMu.Lock()
	defer storeSchemesMu.Unlock()
	if _, dup := storeSchemes[key]; dup {
		panic(fmt.Sprintf("auth: RegisterStoreScheme(%q): the scheme is registered already", scheme))
	}
	storeSchemes[key] = open
}

// OpenStore opens the token store url names:
//
//   - "sqlite:PATH" (also "sqlite://PATH"): an SQLite file, the embedded default
//     for tokens that outlive the process and are shared by the processes of one
//     machine (package github.com/mcs-go/mcs/middleware/auth/sqlite);
//   - "postgres://..." or "postgresql://...": a PostgreSQL database, shared by
//     processes on many machines (package .../middleware/auth/postgres);
//   - "redis://..." or "rediss://...": a Redis server, likewise (package
//     .../middleware/auth/redis);
//   - "memory:": a [MemoryStore];
//   - "file:PATH", or a plain path without a scheme: a [FileStore];
//   - any other scheme a store registered with [RegisterStoreScheme].
//
// The database stores implement [TokenLocker], so that processes sharing them
// refresh a token once. With [WithEncryptionKey] every value is sealed at rest.
// A URL of a known store whose package is not linked in is an error naming the
// package to import; errors never echo a password in the URL. Close the store
// (io.Closer) when done.
func OpenStore(ctx context.Context, url string, opts ...StoreOption) (TokenStore, error) {
	var cfg storeConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	s, err := openStore(ctx, url)
	if err != nil {
		return nil, err
	}
	if cfg.key == nil {
		return s, nil
	}
	sealed, err := Seal(s, cfg.key)
	if err != nil {
		if c, ok := s.(io.Closer); ok {
			c.Close()
		}
		return nil, err
	}
	return sealed, nil
}

func openStore(ctx context.Context, u string) (TokenStore, error) {
	if u == "" {
		return nil, fmt.Errorf("auth: empty token store URL; want %s", storeForms())
	}
	scheme, rest, ok := strings.Cut(u, ":")
	key := strings.ToLower(scheme)
	// A plain path, also a Windows one ("C:\..."), is a token file.
	if !ok || len(scheme) == 1 || strings.ContainsAny(scheme, `/\.`) {
		return NewFileStore(u)
	}
	switch key {
	case "memory":
		if rest != "" {
			return nil, fmt.Errorf("auth: token store %q: a memory store takes no path; write \"memory:\"", u)
		}
		return NewMemoryStore(), nil
	case "file":
		return NewFileStore(strings.TrimPrefix(rest, "//"))
	}
	storeSchemesMu.RLock()
	open := storeSchemes[key]
	storeSchemesMu.RUnlock()
	if open != nil {
		return open(ctx, u)
	}
	if pkg, known := storeBackends[key]; known {
		return nil, fmt.Errorf("auth: token store %q: the %s store is not linked in; import _ \"github.com/mcs-go/mcs/middleware/auth/%s\"", RedactURL(u), pkg, pkg)
	}
	return nil, fmt.Errorf("auth: unsupported token store URL %q; want %s", RedactURL(u), storeForms())
}

func storeForms() string {
	forms := []string{"sqlite:PATH", "postgres://...", "redis://...", "memory:", "a file path"}
	storeSchemesMu.RLock()
	var extra []string
	for s := range storeSchemes {
		if _, known := storeBackends[s]; !known {
			extra = append(extra, s+":...")
		}
	}
	storeSchemesMu.RUnlock()
	slices.Sort(extra)
	return strings.Join(append(forms, extra...), ", ")
}

// RedactURL hides a password in a store URL that is echoed in a message.
func RedactURL(u string) string { return secreturl.Redact(u) }

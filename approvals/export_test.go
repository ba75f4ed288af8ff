package approvals

import (
	"testing"
	"time"
)

// WithBusyTimeout sets the SQLite store's busy timeout, so that a test of a
// locked database does not wait the default 10 s.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busy = d }
}

// WithoutScheme removes the registration of scheme until t ends, as if no store
// had registered it; what was registered before comes back afterwards.
func WithoutScheme(t testing.TB, scheme string) {
	schemesMu.Lock()
	open, had := schemes[scheme]
	delete(schemes, scheme)
	schemesMu.Unlock()
	t.Cleanup(func() {
		schemesMu.Lock()
		defer schemesMu.Unlock()
		delete(schemes, scheme)
		if had {
			schemes[scheme] = open
		}
	})
}

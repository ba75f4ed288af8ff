package approvals

import "time"

// WithBusyTimeout sets the SQLite store's busy timeout, so that a test of a
// locked database does not wait the default 10 s.
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busy = d }
}

package permission

import "time"

// SetClock makes m read the time from now (for the approvals' Created and
// Expires, and a denial's expiry).
func SetClock(m *Middleware, now func() time.Time) { m.clock = now }

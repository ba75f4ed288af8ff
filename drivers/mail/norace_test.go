//go:build !race

package mail

// raceEnabled: the race detector makes allocations larger.
const raceEnabled = false

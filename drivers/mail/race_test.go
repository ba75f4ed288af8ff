//go:build race

package mail

// raceEnabled: the race detector makes allocations larger and calls slower.
const raceEnabled = true

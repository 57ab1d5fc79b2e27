//go:build race

package screen

// raceEnabled: the race detector allocates on its own, so the allocation
// tests do not count under it.
const raceEnabled = true

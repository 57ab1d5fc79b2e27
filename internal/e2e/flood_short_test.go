//go:build !soak

package e2e

// The flood of TestFloodNeverFires in make test: a few runs of a smaller
// log (`make soak` runs issue 20's 20 runs of 50 MB).
const (
	floodRuns = 2
	floodMB   = 8
)

//go:build soak

package e2e

// The flood of TestFloodNeverFires with the build tag soak (make soak):
// issue 20's 20 runs of a 50 MB log.
const (
	floodRuns = 20
	floodMB   = 50
)

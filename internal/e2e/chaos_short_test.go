//go:build !soak

package e2e

import "time"

// chaosSize is TestSoakChaos's size in make test: three agents, a minute
// of chaos (about fifteen actions, each kind at least twice).
var chaosSize = chaosConfig{
	agents:   3,
	chaos:    60 * time.Second,
	pace:     100 * time.Millisecond,
	maxPause: 2 * time.Second,
	maxStop:  12 * time.Second,
	drain:    90 * time.Second,
}

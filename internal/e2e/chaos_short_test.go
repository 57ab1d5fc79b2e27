//go:build !soak

package e2e

import "time"

// chaosSize is TestSoakChaos's size in make test: three agents, 50 s of
// chaos and the end of its round (about ten actions, each kind at least
// once).
var chaosSize = chaosConfig{
	agents:   3,
	chaos:    50 * time.Second,
	pace:     100 * time.Millisecond,
	maxPause: 1500 * time.Millisecond,
	maxStop:  12 * time.Second,
	drain:    90 * time.Second,
}

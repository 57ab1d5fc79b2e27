//go:build soak

package e2e

import "time"

// chaosSize is TestSoakChaos's size in make soak: five agents, half an
// hour of chaos.
var chaosSize = chaosConfig{
	agents:   5,
	chaos:    30 * time.Minute,
	pace:     200 * time.Millisecond,
	maxPause: 8 * time.Second,
	maxStop:  15 * time.Second,
	drain:    3 * time.Minute,
}

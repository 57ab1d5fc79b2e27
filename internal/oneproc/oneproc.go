// Package oneproc runs the program's Go code on one processor
// (GOMAXPROCS 1) from the start of its package initialisation, unless the
// GOMAXPROCS environment variable is set. Import it for its effect, from
// package main only, in a program that does a wrapper's work: the lean
// relay (cmd/relay/lean.go), which wraps agents and hands every command
// that serves others (the hub, the dashboard) to relay-hub.
//
// A wrapper's work is small and comes in chunks (a frame of output, a
// message): with a second processor idle, every goroutine a chunk wakes
// wakes a second thread too (cli.oneProc says what that cost). Changing
// GOMAXPROCS stops the world and empties the caches of the processors it
// removes, whose cost grows with what they hold: 3-4 % of `relay wrap --
// true`'s CPU when `relay wrap` did it, after the package inits had
// filled them (issue 34, docs/performance.md). Here, before the inits
// allocate, the caches are empty. The package imports only what reading
// the environment needs, so its init runs among the first; and it reads
// the environment (a map of it, built once) after the change, and
// changes it back when GOMAXPROCS is set: in the usual case the removed
// processor held no span at all (in 5 runs of 5, against 0-21 when the
// environment was read first).
package oneproc

import (
	"runtime"
	"syscall"
)

func init() {
	if n := runtime.GOMAXPROCS(1); n != 1 {
		if _, set := syscall.Getenv("GOMAXPROCS"); set {
			runtime.GOMAXPROCS(n)
		}
	}
}

// Package oneproc runs `relay wrap`'s Go code on one processor
// (GOMAXPROCS 1) from the start of its package initialisation, unless the
// GOMAXPROCS environment variable is set. Import it for its effect, from
// package main only, in a program that does a wrapper's work: the lean
// relay (cmd/relay/lean.go), which wraps agents and hands every command
// that serves others (the hub, the dashboard) to relay-hub. Its other
// commands (relay hook, run at every hook of an agent) keep the default:
// they never paid for the change.
//
// A wrapper's work is small and comes in chunks (a frame of output, a
// message): with a second processor idle, every goroutine a chunk wakes
// wakes a second thread too (cli.oneProc says what that cost). Changing
// GOMAXPROCS stops the world and empties the caches of the processors it
// removes, whose cost grows with what they hold: 3-4 % of `relay wrap --
// true`'s CPU when `relay wrap` did it, after the package inits had
// filled them (issue 34, docs/performance-start.md). Here, before most inits
// allocate, the caches hold next to nothing. The package imports only
// os, so its init runs among the first; and it reads the environment (a
// map of it, built once) after the change, changing it back when
// GOMAXPROCS is set.
package oneproc

import (
	"os"
	"runtime"
)

func init() {
	if len(os.Args) < 2 || os.Args[1] != "wrap" {
		return
	}
	if n := runtime.GOMAXPROCS(1); n != 1 {
		if _, set := os.LookupEnv("GOMAXPROCS"); set {
			runtime.GOMAXPROCS(n)
		}
	}
}

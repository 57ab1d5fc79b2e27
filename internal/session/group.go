package session

import "sync/atomic"

// group starts the session's goroutines.
type group interface{ Go(func()) }

// terminal is the human's terminal as a panic must leave it: restored
// (wrapper.Session).
type terminal interface{ RestoreTerminal() }

// termGroup is the session's group: every goroutine of the session starts
// through its Go, from the owner's (before the child runs) to the last
// stage's. A panic in one restores the human's terminal, once the wrapper
// has put it in raw mode, and goes on (the program crashes as it would,
// with the terminal usable). The terminal is stored once, by Run, when the
// wrapper runs.
type termGroup struct {
	term atomic.Value // a held{terminal}; empty until attach
}

// held wraps a terminal for atomic.Value, which takes one concrete type.
type held struct{ t terminal }

func (g *termGroup) Go(fn func()) {
	go func() {
		defer g.restoreOnPanic()
		fn()
	}()
}

// attach names the terminal a panic restores.
func (g *termGroup) attach(t terminal) { g.term.Store(held{t}) }

// restoreOnPanic, deferred, restores the human's terminal when a panic
// passes and lets the panic go on.
func (g *termGroup) restoreOnPanic() {
	if r := recover(); r != nil {
		if h, ok := g.term.Load().(held); ok {
			h.t.RestoreTerminal()
		}
		panic(r)
	}
}

package session

import (
	"sync/atomic"

	"github.com/relayhq/relay/internal/wrapper"
)

// group starts the session's goroutines.
type group interface{ Go(func()) }

// termGroup is the session's group: every goroutine of the session starts
// through its Go, from the owner's (before the child runs) to the last
// stage's. A panic in one restores the human's terminal, once the wrapper
// has put it in raw mode, and goes on (the program crashes as it would, with
// the terminal usable). term is stored once, by Run, when the wrapper runs.
type termGroup struct {
	term atomic.Pointer[wrapper.Session]
}

func (g *termGroup) Go(fn func()) {
	go func() {
		defer g.restoreOnPanic()
		fn()
	}()
}

// attach names the wrapper whose terminal a panic restores.
func (g *termGroup) attach(ws *wrapper.Session) { g.term.Store(ws) }

// restoreOnPanic, deferred, restores the human's terminal when a panic
// passes and lets the panic go on.
func (g *termGroup) restoreOnPanic() {
	if r := recover(); r != nil {
		if ws := g.term.Load(); ws != nil {
			ws.RestoreTerminal()
		}
		panic(r)
	}
}

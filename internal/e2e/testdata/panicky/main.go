// Command panicky runs a command the way relay wrap does (wrapper.Start)
// and panics in one of the session's goroutines once the child said READY:
// the test that the human's terminal is restored when relay has a bug.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/relayhq/relay/internal/wrapper"
)

// readyTap panics once the child wrote READY.
type readyTap struct {
	ws    chan *wrapper.Session
	fired bool
	seen  []byte
}

func (t *readyTap) Write(p []byte) (int, error) {
	t.seen = append(t.seen, p...)
	if !t.fired && bytes.Contains(t.seen, []byte("READY")) {
		t.fired = true
		ws := <-t.ws
		ws.Go(func() { panic("panicky: a bug in a session goroutine") })
	}
	return len(p), nil
}

func main() {
	tap := &readyTap{ws: make(chan *wrapper.Session, 1)}
	ws, err := wrapper.Start(wrapper.Options{Command: os.Args[1:], Tap: tap})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tap.ws <- ws
	os.Exit(ws.Wait())
}

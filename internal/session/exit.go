package session

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/relayhq/relay/internal/termsafe"
)

// Timings of a session's end.
const (
	// lastWordsWait bounds the wait, after the agent exited, for the
	// screen to be read to its end and for the handlers to run the
	// commands found before it.
	lastWordsWait = 10 * time.Second
	// exitSendWait bounds the wait for the hub to store what the agent
	// sent, when the session ends with messages in the outbox (the hub is
	// away); the human is told after waitSaid, and may give up with Ctrl-C.
	exitSendWait = 10 * time.Second
	waitSaid     = time.Second
)

// lastWords makes sure that every command the agent wrote before it exited
// is handled before the session ends: it waits until the scanner has read
// the agent's last output (scanned closed) and the handlers have run every
// command queued. A command written just before the agent exits ("…
// @relay:Bob last words", then exit) is thereby sent, never dropped.
func (s *Session) lastWords(scanned <-chan struct{}) {
	if n := s.cmds.drain(scanned, lastWordsWait, s.log); n > 0 {
		fmt.Fprintf(s.stderr(), "relay: %d %s %s wrote before it exited %s not handled in time.\n",
			n, plural(n, "command", "commands"), termsafe.Line(s.name()), plural(n, "was", "were"))
	}
}

// drain waits, up to wait in all, until scanned is closed (the screen is
// read to its end), then closes the queue and waits until the handlers
// have run what it held. It returns how many commands were left unhandled.
func (c commandStage) drain(scanned <-chan struct{}, wait time.Duration, log *slog.Logger) int {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	select {
	case <-scanned:
	case <-deadline.C:
		log.Warn("the agent's last output was not read in time", "wait", wait)
	}
	c.queue.Close()
	select {
	case <-c.done:
		return 0
	case <-deadline.C:
		n := c.queue.Len()
		log.Warn("commands not handled at exit", "n", n, "wait", wait)
		return n
	}
}

// flushOutbox waits (up to exitSendWait) until the hub has stored what the
// agent sent, and tells the human what it did not: a message is never lost
// silently at the end. Messages sent after it are refused.
func (s *Session) flushOutbox() {
	var giveUp <-chan struct{}
	if s.end.sigs != nil {
		giveUp = s.end.sigs.After() // the human's Ctrl-C from now on
	}
	s.link.out.flush(s.grp, giveUp, s.stderr(), s.name, s.log)
}

// flush ends the outbox (see flushOutbox): its last sending runs through
// grp, giveUp ends the wait early, and what the human must know is written
// to human, naming the agent (name).
func (o *outgoing) flush(grp group, giveUp <-chan struct{}, human io.Writer, name func() string, log *slog.Logger) {
	o.mu.Lock()
	ob, unsent := o.ob, len(o.early)
	o.ended = true
	o.mu.Unlock()
	if ob != nil {
		ctx, cancel := context.WithTimeout(context.Background(), exitSendWait)
		defer cancel()
		done := make(chan error, 1)
		grp.Go(func() { done <- ob.Close(ctx) })
		var err error
		select {
		case err = <-done:
		case <-time.After(waitSaid):
			n := ob.Len()
			fmt.Fprintf(human, "relay: %d %s %s wrote %s for the hub; waiting up to %v (Ctrl-C gives up).\n",
				n, plural(n, "message", "messages"), termsafe.Line(name()), plural(n, "waits", "wait"), exitSendWait-waitSaid)
			select {
			case err = <-done:
			case <-giveUp:
				cancel()
				err = <-done
			}
		}
		if err != nil {
			unsent += ob.Len()
			log.Warn("messages still in the outbox at exit", "n", ob.Len(), "err", err)
		}
	}
	if unsent > 0 {
		log.Warn("messages not sent at exit", "n", unsent)
		fmt.Fprintf(human, "relay: %d %s %s wrote %s not sent: the hub is unreachable.\n",
			unsent, plural(unsent, "message", "messages"), termsafe.Line(name()), plural(unsent, "was", "were"))
	}
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

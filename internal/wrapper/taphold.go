package wrapper

import (
	"context"
	"time"

	"github.com/relayhq/relay/internal/alarm"
	"github.com/relayhq/relay/internal/mailbox"
)

// pokeEager is how long after relay or the human wrote to the child the
// tap holds nothing back: the echo of keys and of typed text is read at
// once.
const pokeEager = time.Second

// SetHold lets the tap hold output back from its reader while can says
// the reader may read it later, for at most wait while more output comes
// and 2×wait in all: a spinner's frames then cost the reader one wake-up
// for several (issue 34: waking the scanner's goroutine and its pass over
// a cold cache were most of what relay added to a frame). Output is never
// held while a Note is due, after bytes were dropped, or within a second
// of a Poke. Call it before the first Write.
func (t *Tap) SetHold(can func(p []byte) bool, wait time.Duration) {
	if can == nil || wait <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.hold.can != nil {
		return
	}
	t.hold = tapHold{can: can, wait: wait, alarm: alarm.New()}
}

// Poke says relay or the human wrote to the child: what it prints next is
// an echo the reader must see at once, and so is anything held now.
func (t *Tap) Poke() {
	t.mu.Lock()
	if t.hold.can == nil {
		t.mu.Unlock()
		return
	}
	t.hold.eagerUntil = time.Now().Add(pokeEager)
	held := !t.hold.since.IsZero()
	t.mu.Unlock()
	if held {
		t.ready.Notify()
	}
}

// Release hands what the tap holds back to the reader and waits, at most
// until ctx ends, for the reader to have read it: what decides on the
// screen (whether to type into a busy agent, say) then reads it as it is,
// not as it was before the held frames. It reports whether output was held
// and read; without held output it returns false at once.
func (t *Tap) Release(ctx context.Context) bool {
	t.mu.Lock()
	if t.closed || t.hold.since.IsZero() {
		t.mu.Unlock()
		return false
	}
	read := make(chan struct{})
	t.notes = append(t.notes, tapNote{at: len(t.pending), fn: func() { close(read) }})
	t.mu.Unlock()
	t.ready.Notify()
	select {
	case <-read:
		return true
	case <-ctx.Done():
		return false
	}
}

// tapHold is the tap's holding back (SetHold); its methods are called with
// the tap's lock held.
type tapHold struct {
	can        func([]byte) bool // nil: never hold
	wait       time.Duration
	alarm      *alarm.Alarm // fires 2×wait after since, for output that stopped; a fire may find nothing held
	since      time.Time    // when the oldest byte held came; zero: none held
	eagerUntil time.Time    // hold nothing before then (Poke)
}

// keep reports whether p, about to be appended, may wait for the reader
// to come by itself; ok says the tap has nothing due that forbids it.
func (h *tapHold) keep(p []byte, ok bool) bool {
	if h.can == nil {
		return false
	}
	now := time.Now()
	if !ok || now.Before(h.eagerUntil) || !h.can(p) {
		return false
	}
	if h.since.IsZero() {
		h.since = now
		h.alarm.Set(2 * h.wait)
		return true
	}
	return now.Sub(h.since) < h.wait
}

// taken notes that the reader took everything pending. The alarm is left
// set: the next run of held output sets it again, so while frames come it
// costs one system call a run, not two, and when they stop it fires once
// for nothing.
func (h *tapHold) taken() { h.since = time.Time{} }

// due is the channel the alarm fires on; nil (never ready) without one.
func (h *tapHold) due() mailbox.Signal {
	if h.alarm == nil {
		return nil
	}
	return h.alarm.C
}

// fired notes that the alarm fired.
func (h *tapHold) fired() {
	if h.alarm != nil {
		h.alarm.Fired()
	}
}

// close releases the alarm; nothing is held after.
func (h *tapHold) close() {
	if h.alarm != nil {
		h.alarm.Close()
	}
	*h = tapHold{}
}

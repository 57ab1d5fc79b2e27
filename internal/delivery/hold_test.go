package delivery

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestHold: a reason from Hold keeps everything waiting and has the queue
// look again after HoldPoll; Hold is not asked while an injection is
// pipelined behind one the agent has not shown it took, and what waits
// goes once Hold says nothing.
func TestHold(t *testing.T) {
	clock := newFakeClock()
	why := "the terminal is in use by vim"
	asked := 0
	q := NewQueue(Options{Clock: clock, Pipeline: 2, Join: "\r", HoldPoll: 250 * time.Millisecond,
		Typist: with{Typist: &typist{}, hold: func() string { asked++; return why }}})
	q.Add(Item{Text: "a"})
	q.SetState(idle)
	if b, wait := q.next(); b != nil || wait != 250*time.Millisecond {
		t.Fatalf("held: got %q, wait %v; want nothing, 250ms", texts(b), wait)
	}
	if asked != 1 {
		t.Fatalf("Hold asked %d times, want 1", asked)
	}
	why = ""
	b, _ := q.next()
	if strings.Join(texts(b), ",") != "a" {
		t.Fatalf("after the hold: got %q, want a", texts(b))
	}
	q.deliver(context.Background(), b)
	why = "an unfinished command" // would hold, but the next one is pipelined
	q.Add(Item{Text: "b"})
	asked = 0
	b, _ = q.next()
	if strings.Join(texts(b), ",") != "b" || asked != 0 {
		t.Fatalf("pipelined: got %q, Hold asked %d times; want b, 0", texts(b), asked)
	}
	q.deliver(context.Background(), b)
	q.SettledThrough(2)
	q.Add(Item{Text: "c"})
	if b, _ := q.next(); b != nil || asked != 1 {
		t.Fatalf("after the agent took both: got %q, Hold asked %d times; want nothing, 1", texts(b), asked)
	}
}

package delivery

import (
	"context"
	"testing"
	"time"
)

// TestSettledEndsTheWait: an agent that says it is ready again (a shell's
// prompt came back) gets the next message at once, not after Recheck;
// also when it said so while the injection was still being typed.
func TestSettledEndsTheWait(t *testing.T) {
	for _, tc := range []struct {
		name   string
		during bool // Settled arrives while the first text is being typed
	}{
		{"after typing", false},
		{"while typing", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			ty := &typist{}
			q := NewQueue(Options{Mode: ModeWait, Clock: clock, Recheck: time.Hour, Typist: ty})
			if tc.during {
				ty.during = q.Settled
			}
			q.Add(Item{Text: "one"})
			q.Add(Item{Text: "two"})
			q.SetState(idle)
			b, _ := q.next()
			q.deliver(context.Background(), b)
			if !tc.during {
				if b, wait := q.next(); b != nil || wait != time.Hour {
					t.Fatalf("before Settled: typed %v, wait %v; want nothing until Recheck", texts(b), wait)
				}
				q.Settled()
			}
			if b, _ := q.next(); len(b) != 1 || b[0].Text != "two" {
				t.Fatalf("after Settled: typed %v, want [two] at once", texts(b))
			}
		})
	}
}

// TestSettledBeforeTypingIsForgotten: a Settled that belongs to an earlier
// injection does not skip the wait after the next one.
func TestSettledBeforeTypingIsForgotten(t *testing.T) {
	clock := newFakeClock()
	q := NewQueue(Options{Mode: ModeWait, Clock: clock, Recheck: time.Hour, Typist: &typist{}})
	q.Settled()
	q.Add(Item{Text: "one"})
	q.Add(Item{Text: "two"})
	q.SetState(idle)
	b, _ := q.next()
	q.deliver(context.Background(), b)
	if b, _ := q.next(); b != nil {
		t.Fatalf("typed %v right after the first injection; want a wait for the agent", texts(b))
	}
}

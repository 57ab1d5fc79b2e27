package delivery

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestNextDirect: with a direct path (Options.Direct), the human's draft
// and recent keys no longer hold delivery back, and the injection says
// that only the direct path may take it; a busy agent (but in steer mode),
// one not ready or waiting on its human still holds it.
func TestNextDirect(t *testing.T) {
	clock := newFakeClock()
	for _, tc := range []struct {
		name       string
		mode       Mode
		direct     bool
		state      State
		humanAgo   time.Duration // 0: never typed
		want       bool
		directOnly bool
	}{
		{name: "draft, direct path", direct: true, state: State{Ready: true, Draft: true}, want: true, directOnly: true},
		{name: "draft, no direct path", state: State{Ready: true, Draft: true}},
		{name: "human typing, direct path", direct: true, state: idle, humanAgo: 500 * time.Millisecond, want: true, directOnly: true},
		{name: "idle, direct path: either way", direct: true, state: idle, want: true},
		{name: "busy waits for the turn's end", direct: true, state: State{Ready: true, Busy: true, Draft: true}},
		{name: "steer posts while busy", mode: ModeSteer, direct: true, state: State{Ready: true, Busy: true, Draft: true}, want: true, directOnly: true},
		{name: "a permission prompt waits", direct: true, state: State{Ready: true, Waiting: true}},
		{name: "not ready waits", direct: true, state: State{Draft: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var human time.Time
			if tc.humanAgo > 0 {
				human = clock.Now().Add(-tc.humanAgo)
			}
			q := NewQueue(Options{Mode: tc.mode, Clock: clock, Direct: func() bool { return tc.direct },
				Typist: with{Typist: &typist{}, lastHuman: func() time.Time { return human }}})
			q.Add(Item{Text: "a"})
			q.SetState(tc.state)
			batch, _, directOnly := q.nextDirect()
			if got := batch != nil; got != tc.want {
				t.Fatalf("due %v, want %v", got, tc.want)
			}
			if directOnly != tc.directOnly {
				t.Errorf("direct only %v, want %v", directOnly, tc.directOnly)
			}
		})
	}
}

// heldTypist refuses its first injection with ErrHeld (the CLI did not
// take a direct post while the human's draft forbids typing), then types.
type heldTypist struct {
	mu     sync.Mutex
	calls  []string
	direct atomic.Bool
}

func (h *heldTypist) Type(_ context.Context, in *Injection) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, fmt.Sprintf("%s direct-only=%v", in.Text, in.DirectOnly))
	if in.DirectOnly {
		h.direct.Store(false) // the path is down for a while
		return fmt.Errorf("%w: server gone", ErrHeld)
	}
	return nil
}
func (h *heldTypist) Confirm(context.Context, *Injection) (bool, error) { return true, nil }
func (h *heldTypist) Hold() string                                      { return "" }
func (h *heldTypist) LastHuman() time.Time                              { return time.Time{} }

func (h *heldTypist) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// TestHeldInjectionWaits: a direct delivery that fails while the human's
// draft is there neither fails the message nor types it into the draft:
// it goes back to the queue and is typed once the draft is gone, once.
func TestHeldInjectionWaits(t *testing.T) {
	ty := &heldTypist{}
	ty.direct.Store(true)
	var r receipts
	journal, err := OpenJournal(t.TempDir() + "/journal")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { journal.Close() })
	q := NewQueue(Options{Typist: ty, Direct: ty.direct.Load, HoldPoll: time.Millisecond, Journal: journal})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	q.Add(Item{ID: "m1", Text: "hello", Done: r.done("m1")})
	q.SetState(State{Ready: true, Draft: true})
	testutil.Eventually(t, func() error {
		if got := ty.got(); len(got) != 1 || q.Pending() != 1 {
			return fmt.Errorf("calls %q, pending %d", got, q.Pending())
		}
		return nil
	})
	if got := r.get(); len(got) != 0 {
		t.Fatalf("a held message got receipts %q", got)
	}
	if journal.Seen("m1") {
		t.Fatal("a held message is journaled as typed")
	}
	q.SetState(idle) // the human sent or cleared the draft
	testutil.Eventually(t, func() error {
		if got := r.get(); strings.Join(got, "|") != "m1 delivered|m1 confirmed" {
			return fmt.Errorf("receipts %q", got)
		}
		return nil
	})
	if got := ty.got(); strings.Join(got, "|") != "hello direct-only=true|hello direct-only=false" {
		t.Errorf("calls %q", got)
	}
	// A copy the hub brings again is not typed again.
	q.Add(Item{ID: "m1", Text: "hello", Done: r.done("m1")})
	if got := r.get(); got[len(got)-1] != "m1 delivered "+AlreadyDelivered {
		t.Errorf("receipts %q", got)
	}
}

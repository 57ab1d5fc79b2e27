package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestWaitersReportStuck: a message that waited longer than stuck_after
// is reported once to its sender, with the reason (the agent's, or a
// hook's hold), counted from its first arrival even when a hook held it
// and it came again; one typed (gone) is never reported; a held message
// that stops coming back is forgotten.
func TestWaitersReportStuck(t *testing.T) {
	h := hubtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connect := func(name string) *bus.Client {
		c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Register(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice, bob := connect("alice"), connect("bob")
	var mu sync.Mutex
	var receipts []bus.Receipt
	go func() {
		_ = alice.Receipts(ctx, func(r bus.Receipt) {
			mu.Lock()
			receipts = append(receipts, r)
			mu.Unlock()
		})
	}()
	// Alice's receipts subscription is made on another goroutine: wait
	// until a receipt Bob posts reaches it, or a stuck receipt posted
	// below might come before it and be lost to it.
	probes := 0
	testutil.Eventually(t, func() error {
		probes++
		probe := bus.Envelope{ID: fmt.Sprintf("probe%d", probes), From: "alice", To: "bob"}
		if err := bob.Receipt(ctx, probe, bus.StatusDelivered, "probe"); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(receipts) == 0 {
			return fmt.Errorf("alice's receipts are not live yet")
		}
		return nil
	})
	got := map[string]*bus.Delivery{}
	go func() {
		_ = bob.Inbox(ctx, func(_ context.Context, d *bus.Delivery) {
			mu.Lock()
			got[d.Envelope.Body] = d
			mu.Unlock()
		})
	}()
	for _, body := range []string{"busy", "held", "typed"} {
		if _, err := alice.Send(ctx, "bob", body); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) != 3 {
			return fmt.Errorf("%d of 3 delivered", len(got))
		}
		return nil
	})

	w := newWaiters()
	t0 := time.Now()
	mu.Lock()
	busy, held, typed := got["busy"], got["held"], got["typed"]
	mu.Unlock()
	w.arrive(busy, t0)
	w.arrive(held, t0.Add(time.Second))
	w.arrive(typed, t0)
	w.hold(held.Envelope.ID)
	w.gone(typed.Envelope.ID)
	agentWhy := func() string { return "busy: it goes in when the agent's turn ends" }

	if oldest, _, n := w.overdue(t0.Add(500*time.Millisecond), time.Second, agentWhy); !oldest.IsZero() || n != 0 {
		t.Fatalf("stuck after 0.5 s of a 1 s stuck_after: %v, %d", oldest, n)
	}
	w.arrive(held, t0.Add(1500*time.Millisecond)) // the hook's hold ended; it came again, and is held again
	w.hold(held.Envelope.ID)
	oldest, why, n := w.overdue(t0.Add(2500*time.Millisecond), time.Second, agentWhy)
	if !oldest.Equal(t0) || !strings.HasPrefix(why, "busy") || n != 2 {
		t.Fatalf("after 2.5 s: oldest %v (want %v), why %q, %d stuck; want the busy one first, both stuck", oldest, t0, why, n)
	}
	w.overdue(t0.Add(3*time.Second), time.Second, agentWhy) // told once each, not again
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		stuck := map[string]string{}
		for _, r := range receipts {
			if r.Status == bus.StatusStuck {
				if _, dup := stuck[r.ID]; dup {
					return fmt.Errorf("two stuck receipts for %s", r.ID)
				}
				stuck[r.ID] = r.Reason
			}
		}
		if len(stuck) != 2 || !strings.Contains(stuck[busy.Envelope.ID], "busy: it goes in") ||
			!strings.Contains(stuck[held.Envelope.ID], "held by a MessageReceived hook") || stuck[typed.Envelope.ID] != "" {
			return fmt.Errorf("stuck receipts %v: want one for busy and one for held, none for typed", stuck)
		}
		if r := stuck[held.Envelope.ID]; !strings.Contains(r, "waited 2s") {
			return fmt.Errorf("held's reason %q: want its wait counted from its first arrival (2 s)", r)
		}
		return nil
	})

	w.gone(busy.Envelope.ID)
	if oldest, _, n := w.overdue(t0.Add(1500*time.Millisecond+heldGone+time.Second), time.Second, agentWhy); !oldest.IsZero() || n != 0 {
		t.Errorf("a held message that stopped coming back is still reported: %v, %d", oldest, n)
	}
}

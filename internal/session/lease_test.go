package session

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestLeaseHoldsABatch: messages of a batch that wait to be typed longer
// than the inbox's ack wait are not delivered again while their lease
// runs (one goroutine for the batch); once the lease ends for one of them
// without an ack (a wrapper that lost it), it comes back.
func TestLeaseHoldsABatch(t *testing.T) {
	h := hubtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connect := func(name string, ackWait time.Duration) *bus.Client {
		c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: name, AckWait: ackWait})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Register(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	alice := connect("alice", 0)
	const ackWait = 300 * time.Millisecond
	bob := connect("bob", ackWait)
	var mu sync.Mutex
	count := map[string]int{}
	var first []*bus.Delivery
	l := newLease()
	go func() {
		_ = bob.InboxBatches(ctx, func(_ context.Context, ds []*bus.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range ds {
				count[d.Envelope.Body]++
				if count[d.Envelope.Body] == 1 {
					first = append(first, d)
					l.add(d)
				}
			}
		})
	}()
	for _, r := range alice.SendAll(ctx, []bus.Message{{To: "bob", Body: "one"}, {To: "bob", Body: "two"}}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(first) != 2 {
			return testutil.Errorf("%d of 2 delivered", len(first))
		}
		return nil
	})
	go l.run(ctx, ackWait/3)
	time.Sleep(4 * ackWait) // four ack waits: without the lease, both would be back
	mu.Lock()
	if count["one"] != 1 || count["two"] != 1 {
		t.Fatalf("delivered again under the lease: %v", count)
	}
	one, two := first[0], first[1]
	mu.Unlock()
	_ = one.Ack()
	l.done(one)
	l.done(two) // lost without an ack: it comes back
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if count["two"] < 2 || count["one"] != 1 {
			return testutil.Errorf("after the lease: %v, want two again and one once", count)
		}
		return nil
	})
}

// TestLeaseSaysHeldOnlyForWhatWaits: a message typed within moments of
// its arrival is never reported held; those still waiting heldAfter into
// the lease are, with the reason given then.
func TestLeaseSaysHeldOnlyForWhatWaits(t *testing.T) {
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
	got := map[string][]string{} // body by id: statuses
	ids := map[string]string{}
	go func() {
		_ = alice.Receipts(ctx, func(r bus.Receipt) {
			mu.Lock()
			got[ids[r.ID]] = append(got[ids[r.ID]], string(r.Status)+" "+r.Reason)
			mu.Unlock()
		})
	}()
	go func() {
		_ = bob.InboxBatches(ctx, func(_ context.Context, ds []*bus.Delivery) {
			// A lease a batch, as the session has: the two messages may
			// come in one batch or in two (a loaded machine), and a
			// lease whose batch is all typed has ended.
			l := newLease()
			l.held = func() string { return "busy: a test" }
			for _, d := range ds {
				l.add(d)
			}
			for _, d := range ds {
				if d.Envelope.Body == "typed at once" {
					l.done(d)
					_ = d.AckWithReceipt(bus.StatusDelivered, "")
				}
			}
			go l.run(ctx, time.Minute)
		})
	}()
	// Alice's receipts subscription is made on another goroutine: it may
	// reach the hub after the first receipt, which would then be lost to
	// it. Wait until a receipt Bob posts now reaches it.
	probes := 0
	testutil.Eventually(t, func() error {
		probes++
		probe := bus.Envelope{ID: fmt.Sprintf("probe%d", probes), From: "alice", To: "bob"}
		if err := bob.Receipt(ctx, probe, bus.StatusDelivered, "probe"); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got[""]) == 0 { // a probe's id is in no message's ids
			return testutil.Errorf("alice's receipts are not live yet")
		}
		return nil
	})
	mu.Lock()
	for _, r := range alice.SendAll(ctx, []bus.Message{{To: "bob", Body: "typed at once"}, {To: "bob", Body: "waits"}}) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		ids[r.Envelope.ID] = r.Envelope.Body
	}
	mu.Unlock()
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got["waits"]) != 1 || got["waits"][0] != "held busy: a test" {
			return testutil.Errorf("receipts %v, want waits held for the reason", got)
		}
		if len(got["typed at once"]) != 1 || got["typed at once"][0] != "delivered " {
			return testutil.Errorf("receipts %v, want the typed one delivered only", got)
		}
		return nil
	})
}

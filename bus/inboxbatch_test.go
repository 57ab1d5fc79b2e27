package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestInboxBatchesHandsABurstOver: 20 messages that wait in the inbox
// (the agent was away, or busy) are handed over as one batch, in order;
// one sent later comes as a batch of its own.
func TestInboxBatchesHandsABurstOver(t *testing.T) {
	h := startHub(t)
	bob := register(t, h, "Bob")
	// Only the hub's pending counts cut the burst, not the fallback timer
	// (a loaded machine can space two messages by more than batchWait).
	bus.SetBatchWait(bob, time.Minute)
	alice := register(t, h, "Alice")
	ctx := context.Background()
	var want []string
	for i := range 20 {
		body := fmt.Sprintf("m%02d", i)
		want = append(want, body)
		if _, err := alice.Send(ctx, "Bob", body); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var batches [][]string
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- bob.InboxBatches(ictx, func(_ context.Context, ds []*bus.Delivery) {
			var b []string
			for _, d := range ds {
				_ = d.Ack()
				b = append(b, d.Envelope.Body)
			}
			mu.Lock()
			batches = append(batches, b)
			mu.Unlock()
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("inbox: %v", err)
		}
	}()
	got := func() (all []string, n int, s string) {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range batches {
			all = append(all, b...)
		}
		return all, len(batches), fmt.Sprint(batches)
	}
	testutil.Eventually(t, func() error {
		if all, _, s := got(); fmt.Sprint(all) != fmt.Sprint(want) {
			return testutil.Errorf("batches %s, want the 20 in order", s)
		}
		return nil
	})
	_, burst, s := got()
	if burst != 1 {
		t.Errorf("the burst came in %d batches, want one: %s", burst, s)
	}
	if _, err := alice.Send(ctx, "Bob", "late"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if n := len(batches); n != burst+1 || fmt.Sprint(batches[n-1]) != "[late]" {
			return testutil.Errorf("batches %v, want the burst then [late]", batches)
		}
		return nil
	})
}

// TestInboxBatchesOfHandsOverInPieces: with a small batch size, a burst
// that waits in the inbox is handed over piece by piece, the first piece
// as soon as it is complete, every message once and in order, also when
// handling a batch takes long.
func TestInboxBatchesOfHandsOverInPieces(t *testing.T) {
	h := startHub(t)
	bob := register(t, h, "Bob")
	bus.SetBatchWait(bob, time.Minute) // as in TestInboxBatchesHandsABurstOver
	alice := register(t, h, "Alice")
	ctx := context.Background()
	var want []string
	for i := range 40 {
		body := fmt.Sprintf("m%02d", i)
		want = append(want, body)
		if _, err := alice.Send(ctx, "Bob", body); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var batches [][]string
	release := make(chan struct{})
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- bob.InboxBatchesOf(ictx, 5, func(_ context.Context, ds []*bus.Delivery) {
			var b []string
			for _, d := range ds {
				_ = d.Ack()
				b = append(b, d.Envelope.Body)
			}
			mu.Lock()
			first := len(batches) == 0
			batches = append(batches, b)
			mu.Unlock()
			if first {
				<-release // the first batch is slow to hand over
			}
		})
	}()
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer func() {
		open()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("inbox: %v", err)
		}
	}()
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		// Handed over once it held 5; more may have joined before it
		// was taken.
		if len(batches) != 1 || len(batches[0]) < 5 || fmt.Sprint(batches[0]) != fmt.Sprint(want[:len(batches[0])]) {
			return testutil.Errorf("batches %v, want the first 5 or more, alone", batches)
		}
		return nil
	})
	open()
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		var all []string
		for _, b := range batches {
			all = append(all, b...)
		}
		if fmt.Sprint(all) != fmt.Sprint(want) {
			return testutil.Errorf("got %v in %d batches, want the 40 in order", all, len(batches))
		}
		return nil
	})
}

package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testutil"
)

// TestInboxBatchesHandsABurstOver: 20 messages that wait in the inbox
// (the agent was away, or busy) are handed over as one batch, in order;
// one sent later comes as a batch of its own.
func TestInboxBatchesHandsABurstOver(t *testing.T) {
	h := startHub(t)
	bob := register(t, h, "Bob")
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
	got := func() string {
		mu.Lock()
		defer mu.Unlock()
		return fmt.Sprint(batches)
	}
	testutil.Eventually(t, func() error {
		if g := got(); g != fmt.Sprint([][]string{want}) {
			return testutil.Errorf("batches %s, want one of the 20 in order", g)
		}
		return nil
	})
	if _, err := alice.Send(ctx, "Bob", "late"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, func() error {
		if g := got(); g != fmt.Sprint([][]string{want, {"late"}}) {
			return testutil.Errorf("batches %s, want the burst then [late]", g)
		}
		return nil
	})
}

package bus_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// sendStream sends n numbered messages from alice to Bob, in pieces.
func sendStream(t *testing.T, alice *bus.Client, n int) {
	t.Helper()
	ms := make([]bus.Message, n)
	for i := range ms {
		ms[i] = bus.Message{To: "Bob", Body: "m" + strconv.Itoa(i)}
	}
	for len(ms) > 0 {
		k := min(len(ms), 1000)
		for _, r := range alice.SendAll(context.Background(), ms[:k]) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		ms = ms[k:]
	}
}

// TestInboxHoldsAtMostInboxHold: deliveries the agent has not settled are
// bounded: with none settled, exactly the hold arrive and no more (the
// rest wait on the hub); as they are settled the rest come, every one
// once and in order. An inbox of small batches (a plain shell's) holds
// two of them, not InboxHold (issue 34).
func TestInboxHoldsAtMostInboxHold(t *testing.T) {
	cases := []struct {
		name  string
		batch int // 0: InboxBatches
		hold  int
	}{
		{"batches of MaxBatch", 0, bus.InboxHold},
		{"batches of 64", 64, 128},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.batch > 0 && bus.HoldOf(tc.batch) != tc.hold {
				t.Fatalf("HoldOf(%d) = %d, want %d", tc.batch, bus.HoldOf(tc.batch), tc.hold)
			}
			h := startHub(t)
			bob := register(t, h, "Bob")
			alice := register(t, h, "Alice")
			n := tc.hold + 300
			sendStream(t, alice, n)
			var mu sync.Mutex
			var held []*bus.Delivery
			var got []string
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			handle := func(_ context.Context, ds []*bus.Delivery) {
				mu.Lock()
				defer mu.Unlock()
				for _, d := range ds {
					held = append(held, d)
					got = append(got, d.Envelope.Body)
				}
			}
			go func() {
				if tc.batch == 0 {
					done <- bob.InboxBatches(ctx, handle)
				} else {
					done <- bob.InboxBatchesOf(ctx, tc.batch, handle)
				}
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("inbox: %v", err)
				}
			}()
			count := func() int {
				mu.Lock()
				defer mu.Unlock()
				return len(got)
			}
			testutil.Eventually(t, func() error {
				if c := count(); c != tc.hold {
					return testutil.Errorf("%d delivered, want %d", c, tc.hold)
				}
				return nil
			})
			// No more come while none is settled: wait for a positive sign
			// that the hub holds the rest back (its pending count), then
			// look again.
			js := adminJS(t, h.URL(), h.Token())
			testutil.Eventually(t, func() error {
				cons, err := js.Consumer(context.Background(), bus.StreamName(bus.DefaultWorkspace), "Bob")
				if err != nil {
					return err
				}
				info, err := cons.Info(context.Background())
				if err != nil {
					return err
				}
				if info.NumAckPending != tc.hold || info.NumPending != uint64(n-tc.hold) {
					return testutil.Errorf("ack pending %d, pending %d", info.NumAckPending, info.NumPending)
				}
				return nil
			})
			if c := count(); c != tc.hold {
				t.Fatalf("%d delivered with none settled, want %d", c, tc.hold)
			}
			// Settle as they come: the rest arrive.
			stop := make(chan struct{})
			go func() {
				for {
					mu.Lock()
					ds := held
					held = nil
					mu.Unlock()
					for _, d := range ds {
						_ = d.Ack()
					}
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			defer close(stop)
			testutil.Eventually(t, func() error {
				if c := count(); c != n {
					return testutil.Errorf("%d delivered, want %d", c, n)
				}
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			checkStream(t, got, n)
		})
	}
}

// TestInboxLongStreamCompleteInOrder: a long stream (streamLength: 20,000
// in make soak) into an inbox whose agent takes each batch as it comes
// arrives complete, each message once, in order: the hold bound never
// loses or reorders one.
func TestInboxLongStreamCompleteInOrder(t *testing.T) {
	h := startHub(t)
	bob := register(t, h, "Bob")
	alice := register(t, h, "Alice")
	var mu sync.Mutex
	var got []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- bob.InboxBatchesOf(ctx, 64, func(_ context.Context, ds []*bus.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range ds {
				got = append(got, d.Envelope.Body)
				_ = d.Ack()
			}
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("inbox: %v", err)
		}
	}()
	sendStream(t, alice, streamLength)
	testutil.WaitFor(t, 2*time.Minute, 20*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) < streamLength {
			return testutil.Errorf("%d of %d delivered", len(got), streamLength)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	checkStream(t, got, streamLength)
}

// checkStream checks that got is m0 … m(n-1), each once, in order.
func checkStream(t *testing.T, got []string, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d delivered, want %d", len(got), n)
	}
	for i, b := range got {
		if b != "m"+strconv.Itoa(i) {
			t.Fatalf("message %d is %q, want m%d (first ones: %s)", i, b, i, strings.Join(got[:min(len(got), 10)], " "))
		}
	}
}

// TestInboxNextBatchWhileOneIsTyped: the hold never delays a message an
// agent could take: an agent that settles each batch only once the next
// one is in its hands (it types one while the next waits, as a shell's
// pipeline does) gets a long stream (streamLength) complete and in order.
// A hold of one batch would stall it after the first.
func TestInboxNextBatchWhileOneIsTyped(t *testing.T) {
	h := startHub(t)
	bob := register(t, h, "Bob")
	alice := register(t, h, "Alice")
	// All of it waits on the hub first: every batch is a full one.
	sendStream(t, alice, streamLength)
	var mu sync.Mutex
	var got []string
	var typing []*bus.Delivery // the batch being typed, settled when the next comes
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- bob.InboxBatchesOf(ctx, 64, func(_ context.Context, ds []*bus.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range typing {
				_ = d.Ack()
			}
			typing = ds
			for _, d := range ds {
				got = append(got, d.Envelope.Body)
			}
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("inbox: %v", err)
		}
	}()
	testutil.WaitFor(t, 2*time.Minute, 20*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) < streamLength {
			return testutil.Errorf("%d of %d delivered", len(got), streamLength)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	checkStream(t, got, streamLength)
}

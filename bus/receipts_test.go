package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// delivered counts the messages of the log that name reports delivered.
func delivered(t *testing.T, c *bus.Client, name string) (int, int) {
	t.Helper()
	n, all := 0, 0
	err := c.Log(context.Background(), bus.LogOptions{}, func(e bus.Entry) error {
		all++
		if e.Status[name] == bus.StatusDelivered {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n, all
}

// TestAckWithReceiptStoresThenAcks: AckWithReceipt returns at once; the
// receipt reaches the log and the message is acknowledged (it does not
// come back to the next inbox).
func TestAckWithReceiptStoresThenAcks(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	shortWait := func(o *bus.Options) { o.AckWait = 300 * time.Millisecond }
	bob := register(t, h, "bob", shortWait)
	ms, want := numbered("bob", "typed", 20)
	for _, r := range alice.SendAll(context.Background(), ms) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	var col collector
	col.noAck = true
	stop := inbox(t, bob, &col)
	col.waitBodies(t, want...)
	for _, d := range col.deliveries() {
		if err := d.AckWithReceipt(bus.StatusDelivered, ""); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, func() error {
		if n, all := delivered(t, alice, "bob"); n != len(want) {
			return testutil.Errorf("%d of %d messages reported delivered, want %d", n, all, len(want))
		}
		return nil
	})
	// Acknowledged after their receipts: the hub holds none of them as
	// pending, and a new inbox gets only what comes next.
	js, err := jetstream.New(alice.Conn())
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, func() error {
		cons, err := js.Consumer(context.Background(), bus.StreamName("default"), "bob")
		if err != nil {
			return err
		}
		info, err := cons.Info(context.Background())
		if err != nil {
			return err
		}
		if info.NumAckPending != 0 || info.AckFloor.Consumer != uint64(len(want)) {
			return testutil.Errorf("inbox of bob: %d pending, ack floor %d, want 0 and %d", info.NumAckPending, info.AckFloor.Consumer, len(want))
		}
		return nil
	})
	stop()
	var again collector
	inbox(t, connect(t, h, "bob", shortWait), &again)
	if _, err := alice.Send(context.Background(), "bob", "fresh"); err != nil {
		t.Fatal(err)
	}
	again.waitBodies(t, "fresh")
}

// TestPostedReceiptsSurviveClose: receipts posted just before Close are
// stored all the same (Close waits for them).
func TestPostedReceiptsSurviveClose(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	ms, want := numbered("bob", "closing", 1000)
	var envs []bus.Envelope
	for _, r := range alice.SendAll(context.Background(), ms) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		envs = append(envs, r.Envelope)
	}
	for _, e := range envs {
		if err := bob.PostReceipt(e, bus.StatusDelivered, ""); err != nil {
			t.Fatal(err)
		}
	}
	bob.Close()
	if n, all := delivered(t, alice, "bob"); n != len(want) {
		t.Errorf("%d of %d messages reported delivered after Close, want %d", n, all, len(want))
	}
}

package bus_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestInboxSessionsInARow ends sessions of one inbox every way a wrapper
// can (killed with messages unacknowledged, a hook holding them, a clean
// exit), with messages sent in between: every session's inbox opens, and
// gets, in order, exactly what no earlier session acknowledged. (A
// session after one that resumed in order was refused by the hub: "deliver
// policy can not be updated", and its inbox stopped for good.)
func TestInboxSessionsInARow(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	register(t, h, "bob").Close() // known to senders; its claim is let go
	var unacked []string          // sent, not acknowledged by any session, in order
	ends := []string{"kill", "clean", "hold", "clean", "kill", "hold", "clean"}
	for i, end := range ends {
		t.Run(fmt.Sprintf("%d-%s", i, end), func(t *testing.T) {
			for k := range 3 {
				body := fmt.Sprintf("s%d-m%d", i, k)
				if _, err := alice.Send(context.Background(), "bob", body); err != nil {
					t.Fatal(err)
				}
				unacked = append(unacked, body)
			}
			bob := connect(t, h, "bob")
			var col collector
			col.noAck = true
			stop := inbox(t, bob, &col)
			col.waitBodies(t, unacked...)
			switch end {
			case "kill": // no Nak, no Ack: the connection just ends
				bob.Conn().Close()
				stop()
			case "hold": // a MessageReceived hook answered {"hold": true}
				for _, d := range col.deliveries() {
					if err := d.Nak(30 * time.Second); err != nil {
						t.Fatal(err)
					}
				}
				stop()
			case "clean":
				for _, d := range col.deliveries() {
					if err := d.Ack(); err != nil {
						t.Fatal(err)
					}
				}
				waitNoPending(t, alice, "bob")
				stop()
				unacked = nil
			}
		})
	}
}

// waitNoPending polls until agent's inbox holds nothing unacknowledged.
func waitNoPending(t *testing.T, c *bus.Client, agent string) {
	t.Helper()
	testutil.Eventually(t, func() error {
		as, err := c.Agents(context.Background())
		if err != nil {
			return err
		}
		for _, a := range as {
			if a.Name == agent && a.Pending != 0 {
				return testutil.Errorf("%s has %d pending", agent, a.Pending)
			}
		}
		return nil
	})
}

// TestInboxConsumerDeletedUnderIt deletes a live inbox's consumer, as an
// operator might: the inbox makes it anew and what is sent afterwards
// arrives, without what was acknowledged before coming again.
func TestInboxConsumerDeletedUnderIt(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	var logs logBuffer
	bob := register(t, h, "bob", func(o *bus.Options) { o.Logger = logs.logger() })
	var col collector
	inbox(t, bob, &col)
	for k := range 3 {
		if _, err := alice.Send(context.Background(), "bob", fmt.Sprint("before-", k)); err != nil {
			t.Fatal(err)
		}
	}
	col.waitBodies(t, "before-0", "before-1", "before-2")
	waitNoPending(t, alice, "bob")
	js := adminJS(t, h.URL(), h.Token())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := js.DeleteConsumer(ctx, bus.StreamName(bus.DefaultWorkspace), "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Send(context.Background(), "bob", "after"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if got := col.bodies(); !slices.Contains(got, "after") {
			return testutil.Errorf("inbox holds %q, want after", got)
		}
		return nil
	})
	if got := col.bodies(); fmt.Sprint(got) != fmt.Sprint([]string{"before-0", "before-1", "before-2", "after"}) {
		t.Errorf("inbox holds %q: want each message once", got)
	}
	testutil.Eventually(t, func() error {
		if !strings.Contains(logs.String(), "level=ERROR msg=\"inbox stopped; rebuilding it\"") {
			return testutil.Errorf("no ERROR about the inbox stopping in the log:\n%s", logs.String())
		}
		return nil
	})
}

// TestInboxOpensOverForeignConsumer opens an inbox whose durable consumer
// was made by hand in a shape an update cannot reach (another deliver
// policy, a different ack wait, pending nothing): the inbox opens and
// gets what is sent.
func TestInboxOpensOverForeignConsumer(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	register(t, h, "bob").Close()
	js := adminJS(t, h.URL(), h.Token())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateConsumer(ctx, bus.StreamName(bus.DefaultWorkspace), jetstream.ConsumerConfig{
		Durable: "bob", DeliverPolicy: jetstream.DeliverNewPolicy, AckPolicy: jetstream.AckNonePolicy,
		FilterSubject: bus.InboxSubject(bus.DefaultWorkspace, "bob"),
	}); err != nil {
		t.Fatal(err)
	}
	var col collector
	inbox(t, connect(t, h, "bob"), &col)
	if _, err := alice.Send(context.Background(), "bob", "hello"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "hello")
}

func adminJS(t *testing.T, url, token string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.Token(token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// TestInboxClosedClientIsNoLoss closes a client while its inbox runs (as
// every wrapper does when it exits: its context ends only afterwards): the
// inbox returns without taking the drained pulls for a lost consumer, so
// that a normal shutdown logs no ERROR and rebuilds nothing.
func TestInboxClosedClientIsNoLoss(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	var logs logBuffer
	bob := register(t, h, "bob", func(o *bus.Options) { o.Logger = logs.logger() })
	var col collector
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- bob.Inbox(ctx, col.handle) }()
	if _, err := alice.Send(context.Background(), "bob", "hello"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "hello")
	if err := bob.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("inbox: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the inbox did not return after its client closed")
	}
	if log := logs.String(); strings.Contains(log, "inbox stopped") || strings.Contains(log, "level=ERROR") {
		t.Errorf("a client's Close was logged as a lost inbox:\n%s", log)
	}
}

// levelCounter is a slog handler that counts the records at ERROR.
type levelCounter struct {
	mu     sync.Mutex
	errors []string
}

func (h *levelCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *levelCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *levelCounter) WithGroup(string) slog.Handler            { return h }
func (h *levelCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.mu.Lock()
		h.errors = append(h.errors, r.Message)
		h.mu.Unlock()
	}
	return nil
}

// TestInboxClosedAtOnceLogsNoError: a client closed while its inbox is
// just starting (a wrapper whose agent exits at once) ends the inbox
// without an ERROR line: its pull failing on the draining connection is
// the end, not a lost inbox to rebuild.
func TestInboxClosedAtOnceLogsNoError(t *testing.T) {
	h := startHub(t)
	logs := &levelCounter{}
	for i := range 20 {
		c := register(t, h, fmt.Sprintf("quick%d", i), func(o *bus.Options) { o.Logger = slog.New(logs) })
		done := make(chan error, 1)
		go func() { done <- c.Inbox(context.Background(), func(context.Context, *bus.Delivery) {}) }()
		c.Close()
		if err := <-done; err != nil {
			t.Errorf("inbox of a closed client: %v", err)
		}
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.errors) > 0 {
		t.Errorf("%d ERROR records for inboxes of closed clients: %q", len(logs.errors), logs.errors)
	}
}

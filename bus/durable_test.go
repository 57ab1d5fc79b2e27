package bus_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestOfflineDeliveryExactlyOnce(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	if _, err := alice.Send(context.Background(), "bob", "waiting for you"); !errors.Is(err, bus.ErrUnknownAgent) {
		t.Fatalf("send before bob ever started: %v, want the ErrUnknownAgent notice", err)
	}
	bob := register(t, h, "bob")
	var col collector
	stop := inbox(t, bob, &col)
	col.waitBodies(t, "waiting for you")
	stop()
	// A second session of bob's inbox gets nothing more: it was acknowledged.
	var again collector
	inbox(t, bob, &again)
	if _, err := alice.Send(context.Background(), "bob", "marker"); err != nil {
		t.Fatal(err)
	}
	again.waitBodies(t, "marker")
	col.waitBodies(t, "waiting for you")
}

func TestHubRestartLosesNothing(t *testing.T) {
	home := testutil.Home(t)
	h1, err := hub.Start(context.Background(), hub.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	alice := register(t, h1, "alice")
	register(t, h1, "bob").Close()
	if _, err := alice.Send(context.Background(), "bob", "before the restart"); err != nil {
		t.Fatal(err)
	}
	url := h1.URL()
	h1.Shutdown()

	h2 := startHubAt(t, home, "") // same storage, same port as last time
	if h2.URL() != url {
		t.Fatalf("restarted hub is at %s, was at %s: clients could not reconnect", h2.URL(), url)
	}
	// alice reconnects by herself and can send again.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := alice.Send(ctx, "bob", "after the restart"); err != nil {
		t.Fatalf("send after the hub restarted: %v", err)
	}
	bob := register(t, h2, "bob")
	var col collector
	inbox(t, bob, &col)
	col.waitBodies(t, "before the restart", "after the restart")
}

func TestUnackedIsRedelivered(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	shortWait := func(o *bus.Options) { o.AckWait = 300 * time.Millisecond }
	bob := register(t, h, "bob", shortWait)
	var first collector
	first.noAck = true
	stop := inbox(t, bob, &first)
	env, err := alice.Send(context.Background(), "bob", "ack me")
	if err != nil {
		t.Fatal(err)
	}
	first.waitBodies(t, "ack me")
	stop() // Inbox returns: the unacknowledged delivery is handed back

	var second collector
	second.noAck = true
	stop = inbox(t, bob, &second)
	second.waitBodies(t, "ack me")
	// The inbox resumed in order from the unacknowledged message (a new
	// consumer), so the count starts again; the id is what tells a repeat.
	if d := second.deliveries()[0]; d.Envelope.ID != env.ID {
		t.Errorf("redelivery: id %s, want %s", d.Envelope.ID, env.ID)
	}
	stop()

	// A crash (no Nak): the message comes back after AckWait to a new client.
	var third collector
	third.noAck = true
	crashed := register(t, h, "carol", shortWait)
	stop = inbox(t, crashed, &third)
	if _, err := alice.Send(context.Background(), "carol", "survive a crash"); err != nil {
		t.Fatal(err)
	}
	third.waitBodies(t, "survive a crash")
	crashed.Conn().Close()
	stop()
	var fourth collector
	inbox(t, connect(t, h, "carol", shortWait), &fourth)
	fourth.waitBodies(t, "survive a crash")
}

func TestBadEnvelopesFromForeignClients(t *testing.T) {
	h := startHub(t)
	var logs logBuffer
	bob := register(t, h, "bob", func(o *bus.Options) { o.Logger = logs.logger() })
	alice := register(t, h, "alice")
	var col collector
	inbox(t, bob, &col)

	nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subj := bus.InboxSubject("default", "bob")
	bad := []struct{ data, reason string }{
		{`{"id":"big1","workspace":"default","from":"mallory","to":"bob","body":"` + strings.Repeat("x", bus.MaxBody+1) + `"}`, "message body too large"},
		{"{\"id\":\"utf1\",\"workspace\":\"default\",\"from\":\"mallory\",\"to\":\"bob\",\"body\":\"caf\xe9\"}", "not valid UTF-8"},
		{`{"id":"nofrom1","workspace":"default","to":"bob","body":"who am I"}`, `field \"from\" is missing`},
		{`not json at all`, "not a JSON envelope"},
		{`{"id":"wrong1","workspace":"default","from":"mallory","to":"carol","body":"misrouted"}`, `addressed to \"carol\"`},
	}
	for _, b := range bad {
		if err := nc.Publish(subj, []byte(b.data)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := alice.Send(context.Background(), "bob", "a good one"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "a good one")
	testutil.Eventually(t, func() error {
		out := logs.String()
		for _, b := range bad {
			if !strings.Contains(out, b.reason) {
				return testutil.Errorf("log lacks the reason %q:\n%s", b.reason, out)
			}
		}
		return nil
	})
	// The senders that named themselves get a failed receipt in the log.
	testutil.Eventually(t, func() error {
		var failed []string
		err := alice.Log(context.Background(), bus.LogOptions{}, func(e bus.Entry) error {
			for who, st := range e.Status {
				if st == bus.StatusFailed {
					id := e.ID
					if strings.HasPrefix(id, "#") {
						id = "#N" // not an envelope: named by its stream sequence
					}
					failed = append(failed, id+"@"+who)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		want := "big1@bob utf1@bob nofrom1@bob #N@bob wrong1@bob"
		if got := strings.Join(failed, " "); got != want {
			return testutil.Errorf("failed entries %v, want %s", failed, want)
		}
		return nil
	})
}

func TestClientsSurviveAHubRestart(t *testing.T) {
	home := testutil.Home(t)
	h1, err := hub.Start(context.Background(), hub.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	alice := register(t, h1, "alice")
	bob := register(t, h1, "bob")
	var col collector
	inbox(t, bob, &col)
	if _, err := alice.Send(context.Background(), "bob", "before"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "before")
	h1.Shutdown()
	h2 := startHubAt(t, home, "")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := alice.Send(ctx, "bob", "after"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "before", "after") // bob's running inbox picked up again
	carol := register(t, h2, "carol")
	var cc collector
	inbox(t, carol, &cc)
	testutil.Eventually(t, func() error { // alice's view of who is there follows
		_, err := alice.Send(ctx, "*", "all after")
		if err != nil {
			return err
		}
		if got := cc.bodies(); len(got) == 0 {
			return testutil.Errorf("carol got nothing yet")
		}
		return nil
	})
	if err := bob.SetState(ctx, bus.StateIdle); err != nil {
		t.Errorf("bob's presence after the restart: %v", err)
	}
}

func TestClientFindsAHubOnANewPort(t *testing.T) {
	home := testutil.Home(t)
	h1, err := hub.Start(context.Background(), hub.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	find := func() (string, error) { ep, err := hub.Discover(home); return ep.URL, err }
	alice := register(t, h1, "alice", func(o *bus.Options) { o.Discover = find })
	register(t, h1, "bob").Close()
	old := h1.URL()
	h1.Shutdown()
	// Someone else takes the port: the hub comes back elsewhere.
	l, err := net.Listen("tcp", strings.TrimPrefix(old, "nats://"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h2 := startHubAt(t, home, "")
	if h2.URL() == old {
		t.Fatalf("hub came back on its old port %s", old)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := alice.Send(ctx, "bob", "found you"); err != nil {
		t.Fatalf("send after the hub moved to %s: %v", h2.URL(), err)
	}
}

// TestInboxOpensWhenTheHubReturns: an inbox started while the hub is down
// does not give up; it opens when the hub is back and delivers what waited.
func TestInboxOpensWhenTheHubReturns(t *testing.T) {
	home := testutil.Home(t)
	h1, err := hub.Start(context.Background(), hub.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	alice := register(t, h1, "alice")
	var logs logBuffer
	bob := register(t, h1, "bob", func(o *bus.Options) { o.Logger = logs.logger() })
	if _, err := alice.Send(context.Background(), "bob", "before"); err != nil {
		t.Fatal(err)
	}
	h1.Shutdown()

	var col collector
	inbox(t, bob, &col)
	testutil.Eventually(t, func() error { // an attempt failed with the hub away
		if !strings.Contains(logs.String(), "inbox cannot open yet") {
			return testutil.Errorf("bob's log:\n%s", logs.String())
		}
		return nil
	})
	startHubAt(t, home, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := alice.Send(ctx, "bob", "after"); err != nil {
		t.Fatal(err)
	}
	col.waitBodies(t, "before", "after")
}

package bus_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// numbered returns n messages to to, with bodies "<prefix> 0".. in order.
func numbered(to, prefix string, n int) ([]bus.Message, []string) {
	ms := make([]bus.Message, n)
	bodies := make([]string, n)
	for i := range ms {
		bodies[i] = fmt.Sprintf("%s %d", prefix, i)
		ms[i] = bus.Message{To: to, Body: bodies[i]}
	}
	return ms, bodies
}

// TestSendAllInOrderOnce: a burst sent with SendAll (every publish in
// flight at once) reaches the inbox whole, in order, each message once;
// a recipient never registered is said per message, as Send says it.
func TestSendAllInOrderOnce(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	ms, want := numbered("bob", "burst", 300)
	ms = append(ms, bus.Message{To: "nobody", Body: "lost soul"})
	rs := alice.SendAll(context.Background(), ms)
	if len(rs) != len(ms) {
		t.Fatalf("%d results for %d messages", len(rs), len(ms))
	}
	for i, r := range rs[:300] {
		if r.Err != nil || r.Envelope.Body != want[i] || r.Envelope.ID == "" {
			t.Fatalf("message %d: %+v", i, r)
		}
	}
	if err := rs[300].Err; !errors.Is(err, bus.ErrUnknownAgent) {
		t.Errorf("to an unknown agent: %v, want ErrUnknownAgent", err)
	}
	var col collector
	inbox(t, bob, &col)
	col.waitBodies(t, want...)
}

// TestSendAllAcrossAHubRestart: SendAll while the hub is down waits and
// publishes again (same ids) until the hub is back: every message is
// stored once.
func TestSendAllAcrossAHubRestart(t *testing.T) {
	home := testutil.Home(t)
	h1, err := hub.Start(context.Background(), hub.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	alice := register(t, h1, "alice", func(o *bus.Options) { o.Logger = log.logger() })
	register(t, h1, "bob").Close()
	// Close publishes bob's offline record without waiting for the hub
	// to store it: wait until it reads offline, else the restarted hub
	// may find bob's claim still held by a live process (this one).
	waitOffline(t, alice, "bob")
	h1.Shutdown()

	ms, want := numbered("bob", "queued", 50)
	done := make(chan []bus.Sent, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- alice.SendAll(ctx, ms)
	}()
	testutil.Eventually(t, func() error { // sending met a hub that is away
		if !strings.Contains(log.String(), "retrying") {
			return testutil.Errorf("no retry logged yet")
		}
		return nil
	})
	h2 := startHubAt(t, home, "")
	for i, r := range <-done {
		if r.Err != nil {
			t.Fatalf("message %d: %v", i, r.Err)
		}
	}
	var col collector
	inbox(t, register(t, h2, "bob"), &col)
	col.waitBodies(t, want...)
}

// TestOutboxSendsABurstInOrder: 200 messages posted at once go out
// together; OnSent hears of each once, in the order posted, and the inbox
// holds them in that order.
func TestOutboxSendsABurstInOrder(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	var mu sync.Mutex
	var heard []string
	ob := alice.NewOutbox(bus.OutboxOptions{Size: 256, OnSent: func(e bus.Envelope, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			heard = append(heard, "error: "+err.Error())
			return
		}
		heard = append(heard, e.Body)
	}})
	ms, want := numbered("bob", "posted", 200)
	for _, m := range ms {
		if _, err := ob.Post(m); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ob.Close(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := fmt.Sprint(heard)
	mu.Unlock()
	if got != fmt.Sprint(want) {
		t.Errorf("OnSent heard %s, want %s", got, fmt.Sprint(want))
	}
	var col collector
	inbox(t, bob, &col)
	col.waitBodies(t, want...)
}

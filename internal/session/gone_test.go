package session

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// TestNoInboxForAnAgentAlreadyGone: the inbox of an agent that exited
// before the inbox's goroutine first ran, which Run has not learnt yet (the
// goroutine that reaps the child runs after it on the wrapper's one
// processor), opens nothing on the hub: no consumer is made or looked up
// beside the exit of a command that ends at once (issue 34).
func TestNoInboxForAnAgentAlreadyGone(t *testing.T) {
	h := hubtest.Start(t)
	r := newRig(t, Config{Hub: h.URL(), Token: h.Token()})
	gone := func() bool { return true }
	r.s.end.gone.Store(&gone)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.s.serveInbox(r.ctx)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the inbox of an agent that had exited opened and served")
	}
	js, err := jetstream.New(newPeer(t, h.URL(), h.Token(), "Watcher").c.Conn())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := js.Consumer(ctx, bus.StreamName("default"), "Alice"); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Errorf("Alice's inbox on the hub: %v, want none", err)
	}
}

// TestNoIdentityRewriteForAnAgentGone: an agent's credential that comes
// after the agent exited (Run not knowing it yet) is recorded, to be
// revoked when the session closes, but the identity file, which goes with
// the session, is not written again on the exit's path (issue 34).
func TestNoIdentityRewriteForAnAgentGone(t *testing.T) {
	h := hubtest.Start(t)
	r := newRig(t, Config{Hub: h.URL(), Token: h.Token()})
	a := &r.s.link.ident
	a.issuing.Wait() // the rig's connection asked for one already
	if _, err := r.s.startAgentFile(r.ctx, "Alice"); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	path := a.path
	a.f.Token = ""
	a.mu.Unlock()
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	gone := func() bool { return true }
	r.s.end.gone.Store(&gone)
	r.s.issueAside(r.s.link.client.Load(), "Alice", h.URL())
	a.issuing.Wait()
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("the identity file of an agent that had exited was written again")
	}
	a.mu.Lock()
	token := a.f.Token
	a.mu.Unlock()
	if token == "" {
		t.Error("the credential issued after the agent exited is not recorded: the session's end would not revoke it")
	}
}

// TestNoPresenceUpdateForAnAgentGone: a state set as the agent exits is not
// sent: the wrapper marks the agent offline as it closes, and an update
// under way would hold that record back by a round trip (issue 34).
func TestNoPresenceUpdateForAnAgentGone(t *testing.T) {
	h := hubtest.Start(t)
	alice := newPeer(t, h.URL(), h.Token(), "Alice")
	before, err := stateOf(alice.c, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	if before == bus.StateBusy {
		t.Fatalf("Alice reads %s before the test", before)
	}
	p := newPresenceStage()
	p.set(bus.StateBusy, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		p.run(ctx, func() *bus.Client { return alice.c }, func() bool { return true }, slog.New(slog.DiscardHandler))
	}()
	waitFor(t, "the state taken", func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.dirty {
			return errors.New("still pending")
		}
		return nil
	})
	cancel()
	<-ran // what run sent, it sent before it returned
	if got, err := stateOf(alice.c, "Alice"); err != nil || got != before {
		t.Errorf("Alice reads %s (%v) after a state set once she was gone, want %s", got, err, before)
	}
}

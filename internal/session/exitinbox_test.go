package session

import (
	"context"
	"errors"
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
	r.s.child.gone = func() bool { return true }
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

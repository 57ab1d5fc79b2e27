package session

import (
	"context"
	"testing"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/hub/hubtest"
)

// TestRepeatIsPerSender: the delivery queue and journal tell a repeat by
// sender and id. Mallory sends first with the id Alice's next message
// from Carol carries (she learnt it from a broadcast, say); Carol's
// message is still typed.
func TestRepeatIsPerSender(t *testing.T) {
	h := hubtest.Start(t)
	mallory := newPeer(t, h.URL(), h.Token(), "Mallory")
	carol := newPeer(t, h.URL(), h.Token(), "Carol")
	r := startRig(t, Config{Hub: h.URL(), Token: h.Token()})
	r.screenBusy(false)
	ctx := context.Background()
	const id = "shared-id-1"
	if _, err := mallory.c.SendMessage(ctx, bus.Message{ID: id, To: "Alice", Body: "first from mallory"}); err != nil {
		t.Fatal(err)
	}
	r.waitTyped(t, "first from mallory")
	if _, err := carol.c.SendMessage(ctx, bus.Message{ID: id, To: "Alice", Body: "then from carol"}); err != nil {
		t.Fatal(err)
	}
	r.waitTyped(t, "then from carol")
}

package session

import (
	"context"
	"strings"
	"testing"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
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

// TestRepeatOfBareJournalID: an id a relay of before sender-keyed repeats
// journaled (bare) is still known as typed after the upgrade.
func TestRepeatOfBareJournalID(t *testing.T) {
	h := hubtest.Start(t)
	carol := newPeer(t, h.URL(), h.Token(), "Carol")
	r := startRig(t, Config{Hub: h.URL(), Token: h.Token()})
	if err := r.s.inbox.journal.Mark("legacy-1"); err != nil {
		t.Fatal(err)
	}
	r.screenBusy(false)
	ctx := context.Background()
	if _, err := carol.c.SendMessage(ctx, bus.Message{ID: "legacy-1", To: "Alice", Body: "typed before the upgrade"}); err != nil {
		t.Fatal(err)
	}
	if _, err := carol.c.SendMessage(ctx, bus.Message{ID: "new-1", To: "Alice", Body: "a new one"}); err != nil {
		t.Fatal(err)
	}
	r.waitTyped(t, "a new one")
	if strings.Contains(r.ty.String(), "typed before the upgrade") {
		t.Fatalf("a message the journal knew was typed again:\n%s", r.ty.String())
	}
}

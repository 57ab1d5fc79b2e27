package bus_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
)

// Close writes its agent offline without waiting for the hub's answer
// (one round trip for the whole of Close), so it must never overwrite a
// claim that is no longer its own: the offline record is a compare-and-set
// on the claim's revision. Once the hub has stored what Close sent, a name
// still held marks offline (and is free for the next Register at once),
// and a name another session wrote meanwhile keeps that session's record.
func TestCloseMarksOfflineOnlyItsOwnClaim(t *testing.T) {
	h := startHub(t)
	admin := connect(t, h, "admin")
	js, err := jetstream.New(admin.Conn())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := js.KeyValue(ctx, bus.PresenceBucket("default"))
	if err != nil {
		t.Fatal(err)
	}
	// stored waits until the bucket's stream has handled everything sent
	// to it before: a write through it, answered, comes after them.
	stored := func() {
		t.Helper()
		if _, err := kv.Put(ctx, "zz-marker", []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	record := func(name string) (session string, state bus.State) {
		t.Helper()
		e, err := kv.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Session string    `json:"session"`
			State   bus.State `json:"state"`
		}
		if err := json.Unmarshal(e.Value(), &r); err != nil {
			t.Fatal(err)
		}
		return r.Session, r.State
	}

	alice := register(t, h, "alice")
	alice.Close()
	stored()
	if _, st := record("alice"); st != bus.StateOffline {
		t.Errorf("alice after Close: %s, want offline", st)
	}
	again := connect(t, h, "alice")
	if err := again.Register(ctx); err != nil {
		t.Errorf("alice again after Close: %v, want the name free", err)
	}

	bob := register(t, h, "bob")
	other, _ := json.Marshal(map[string]any{"state": "idle", "session": "another-session", "heartbeat_ms": 60000})
	if _, err := kv.Put(ctx, "bob", other); err != nil {
		t.Fatal(err)
	}
	bob.Close()
	stored()
	if session, st := record("bob"); session != "another-session" || st != bus.StateIdle {
		t.Errorf("bob after Close: session %q %s, want another-session's idle record kept", session, st)
	}
}

package session

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// TestWrapperPresencePromise: docs/protocol.md promises that a wrapper
// rewrites its presence every 10 s and that one which died without a word
// reads offline 30 s after its last heartbeat (three missed) from another
// machine. The record a session writes carries its heartbeat; a change of
// either figure must change the docs too.
func TestWrapperPresencePromise(t *testing.T) {
	h := hubtest.Start(t)
	startRig(t, Config{Hub: h.URL(), Token: h.Token()})
	watcher := newPeer(t, h.URL(), h.Token(), "Watcher")
	js, err := jetstream.New(watcher.c.Conn())
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Heartbeat int64 `json:"heartbeat_ms"`
	}
	waitFor(t, "Alice's presence record", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		kv, err := js.KeyValue(ctx, bus.PresenceBucket("default"))
		if err != nil {
			return err
		}
		e, err := kv.Get(ctx, "Alice")
		if err != nil {
			return err
		}
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			return fmt.Errorf("record %s: %w", e.Value(), err)
		}
		return nil
	})
	hb := time.Duration(rec.Heartbeat) * time.Millisecond
	if hb != 10*time.Second {
		t.Errorf("heartbeat_ms %d, docs/protocol.md says 10000", rec.Heartbeat)
	}
	if got := bus.OfflineAfter(hb); got != 30*time.Second {
		t.Errorf("offline %v after the last heartbeat, docs/protocol.md says 30 s", got)
	}
}

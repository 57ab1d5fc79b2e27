package bus

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/internal/hub/hubtest"
)

// TestPresenceKVAsJetStream: the presence bucket's own requests answer as
// jetstream's KeyValue does, on a bucket replicated on three nodes (whose
// stream reports a lost compare-and-set with a code of its own): a second
// create and an update on a stale revision are refused with jetstream's
// errors, a deleted key reads as none and is created again.
func TestPresenceKVAsJetStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-node cluster")
	}
	srvs := hubtest.Cluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{URL: srvs[0].ClientURL(), Replicas: 3, Workspace: "kvtest"}
	maker, err := Connect(ctx, o) // makes the bucket
	if err != nil {
		t.Fatal(err)
	}
	defer maker.Close()
	c, err := Connect(ctx, o) // finds it
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	kv := c.kv
	if !kv.plain {
		t.Fatal("the bucket is not read with its own requests (no direct gets?)")
	}

	rev, err := kv.Create(ctx, "Alice", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "Alice", []byte("two")); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Errorf("second create: %v, want ErrKeyExists", err)
	}
	if _, err := kv.Update(ctx, "Alice", []byte("two"), rev+7); !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		t.Errorf("update on a stale revision: %v, want ErrKeyRevisionMismatch", err)
	}
	rev2, err := kv.Update(ctx, "Alice", []byte("two"), rev)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "Alice")
	if err != nil || string(e.Value()) != "two" || e.Revision() != rev2 || e.Key() != "Alice" {
		t.Fatalf("get: %v, %v", e, err)
	}
	if _, err := kv.Get(ctx, "Bob"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("get of a key never written: %v, want ErrKeyNotFound", err)
	}

	h, err := kv.handle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Delete(ctx, "Alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "Alice"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("get of a deleted key: %v, want ErrKeyNotFound", err)
	}
	if _, err := kv.Create(ctx, "Alice", []byte("three")); err != nil {
		t.Errorf("create over a delete marker: %v", err)
	}
}

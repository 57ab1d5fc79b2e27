package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/relayhq/relay/bus"
)

// TestClaimAfterKeyDeleted: a name whose key an operator deleted after its
// agent left (`nats kv del`: purges are refused, TestPresenceRollup) is
// claimed again at once, and the new claim's heartbeats keep it: the claim
// writes over the key's delete marker.
func TestClaimAfterKeyDeleted(t *testing.T) {
	h := startHub(t)
	admin := connect(t, h, "admin")
	ctx := context.Background()
	js, err := jetstream.New(admin.Conn())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, bus.PresenceBucket("default"))
	if err != nil {
		t.Fatal(err)
	}
	register(t, h, "Carol", withBeat).Close()
	if err := kv.Delete(ctx, "Carol"); err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	register(t, h, "Carol", withBeat)
	listed(t, admin, "Carol", since)
	listed(t, admin, "Carol", time.Now()) // a heartbeat after the claim: still hers
	refused(t, h, "Carol")
}

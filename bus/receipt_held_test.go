package bus_test

import (
	"context"
	"testing"

	"github.com/relayhq/relay/bus"
)

// TestHoldIsInTheLog: a message held back by loop damping reaches no inbox
// but shows in the log with the status held and its reason.
func TestHoldIsInTheLog(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "Alice")
	register(t, h, "Bob")
	env, err := alice.Hold(context.Background(), bus.Message{To: "Bob", Body: "ack ack ack"}, "held: 10 messages a minute")
	if err != nil {
		t.Fatal(err)
	}
	var got []bus.Entry
	if err := alice.Log(context.Background(), bus.LogOptions{}, func(e bus.Entry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != env.ID || got[0].Body != "ack ack ack" || got[0].Status["Bob"] != bus.StatusHeld || got[0].Reasons["Bob"] != "held: 10 messages a minute" {
		t.Fatalf("log %+v", got)
	}
}

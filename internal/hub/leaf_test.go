package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

func TestParseTicket(t *testing.T) {
	good := hub.Ticket{URL: "nats-leaf://127.0.0.1:7422", Machine: "laptop", Secret: "s3cret", TLSPin: "ab"}
	cases := []struct {
		name string
		in   string
		err  error
	}{
		{"round trip", good.String(), nil},
		{"spaces around", "  " + good.String() + "\n", nil},
		{"no prefix", strings.TrimPrefix(good.String(), "relay-ticket1:"), hub.ErrBadTicket},
		{"not base64", "relay-ticket1:!!!", hub.ErrBadTicket},
		{"no secret", hub.Ticket{URL: "nats-leaf://h:1", Machine: "m"}.String(), hub.ErrBadTicket},
		{"bad machine", hub.Ticket{URL: "nats-leaf://h:1", Machine: "a.b", Secret: "s"}.String(), hub.ErrBadTicket},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := hub.ParseTicket(c.in)
			if !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err == nil && got != good {
				t.Fatalf("got %+v, want %+v", got, good)
			}
		})
	}
}

// TestLeafTicketRules: a hub that is a leaf gives no tickets, and a ticket
// not used before it expired is refused.
func TestLeafTicketRules(t *testing.T) {
	team := hubtest.Start(t)
	tk, err := team.Invite("late", time.Nanosecond)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := hub.Start(context.Background(), hub.Options{Home: t.TempDir(), Listen: "127.0.0.1:0", Join: &tk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(leaf.Shutdown)
	if _, err := leaf.Invite("other", 0); !errors.Is(err, hub.ErrNoLeafListener) {
		t.Errorf("a leaf's Invite: %v, want ErrNoLeafListener", err)
	}
	// The leaf retries every second: two retries refused.
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if team.LinkUp() {
			t.Fatal("an expired ticket linked")
		}
	}
	if ls := team.Leaves(); len(ls) != 1 || !ls[0].Joined.IsZero() || ls[0].Secret != "" {
		t.Errorf("Leaves() = %+v", ls)
	}
}

package bus_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// startLeaf runs a hub in a new home that joins team as machine.
func startLeaf(t *testing.T, team *hub.Hub, machine string) *hub.Hub {
	t.Helper()
	tk, err := team.Invite(machine, 0)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := hub.ParseTicket(tk.String())
	if err != nil {
		t.Fatal(err)
	}
	l, err := hub.Start(context.Background(), hub.Options{Home: t.TempDir(), Listen: "127.0.0.1:0", Join: &parsed, Logger: bridgeLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Shutdown)
	waitLink(t, l, true)
	return l
}

func waitLink(t *testing.T, h *hub.Hub, up bool) {
	t.Helper()
	testutil.Eventually(t, func() error {
		if h.LinkUp() != up {
			return testutil.Errorf("link up is %v, want %v", h.LinkUp(), up)
		}
		return nil
	})
}

// waitAgents polls until c lists every name in want as present.
func waitAgents(t *testing.T, c *bus.Client, want ...string) {
	t.Helper()
	testutil.Eventually(t, func() error {
		ps, err := c.Agents(context.Background())
		if err != nil {
			return err
		}
		var live []string
		for _, p := range ps {
			if p.State != bus.StateOffline {
				live = append(live, p.Name)
			}
		}
		for _, w := range want {
			if !slices.Contains(live, w) {
				return testutil.Errorf("%s sees %v, not %s", c.Name(), live, w)
			}
		}
		return nil
	})
}

// waitOffline polls until c reads agent name's record as offline.
func waitOffline(t *testing.T, c *bus.Client, name string) {
	t.Helper()
	testutil.Eventually(t, func() error {
		ps, err := c.Agents(context.Background())
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Name == name && p.State != bus.StateOffline {
				return testutil.Errorf("%s reads %s %s, not offline", c.Name(), name, p.State)
			}
		}
		return nil
	})
}

func send(t *testing.T, from *bus.Client, to string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		if _, err := from.Send(context.Background(), to, b); err != nil {
			t.Fatalf("%s to %s: %v", from.Name(), to, err)
		}
	}
}

// TestLeafTeam: a team hub and a leaf joined by ticket stand for two
// machines. Alice on the team hub, Bob and Carol on the leaf see each other
// and message each other once, in order; with the team hub down, Bob and
// Carol keep talking and Bob's messages to Alice wait on the leaf and
// arrive once, in order, when it is back; a revoked leaf is cut off and
// refused.
func TestLeafTeam(t *testing.T) {
	teamHome := t.TempDir()
	team, err := hub.Start(context.Background(), hub.Options{Home: teamHome, Listen: "127.0.0.1:0", Logger: bridgeLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(team.Shutdown)
	leaf := startLeaf(t, team, "laptop")

	alice := register(t, team, "alice")
	bob := register(t, leaf, "bob")
	carol := register(t, leaf, "carol")
	waitAgents(t, alice, "alice", "bob", "carol")
	waitAgents(t, bob, "alice", "bob", "carol")

	var ai, bi, ci collector
	inbox(t, alice, &ai)
	inbox(t, bob, &bi)
	inbox(t, carol, &ci)

	send(t, alice, "bob", "a1", "a2")
	send(t, bob, "alice", "b1", "b2")
	waitSide(t, &bi, "a1", "a2")
	waitSide(t, &ai, "b1", "b2")
	send(t, carol, "bob", "c1") // after: the order of two senders is not defined
	waitSide(t, &bi, "a1", "a2", "c1")

	// The team hub goes down: the leaf's side keeps talking.
	team.Shutdown()
	waitLink(t, leaf, false)
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("q%02d", i))
	}
	send(t, bob, "alice", want...)
	send(t, bob, "carol", "b-c")
	send(t, carol, "bob", "c2")
	waitSide(t, &ci, "b-c")
	waitSide(t, &bi, "a1", "a2", "c1", "c2")

	// Back: the 20 arrive once, in order.
	team2 := startHubAt(t, teamHome, "")
	waitLink(t, leaf, true)
	waitSide(t, &ai, append([]string{"b1", "b2"}, want...)...)

	// Revoked: the link is cut at once and refused afterwards; the leaf's
	// agents keep talking to each other.
	if !team2.RevokeLeaf("laptop") {
		t.Fatal("RevokeLeaf found no leaf")
	}
	waitLink(t, leaf, false)
	send(t, bob, "alice", "after-revoke")
	send(t, bob, "carol", "still-local")
	waitSide(t, &ci, "b-c", "still-local")
	// The leaf retries every second: two retries refused.
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if leaf.LinkUp() || team2.LinkUp() {
			t.Fatal("a revoked leaf linked again")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := ai.bodies(); slices.Contains(got, "after-revoke") {
		t.Fatalf("alice got a message from a revoked leaf: %q", got)
	}
}

// bridgeLog keeps the bridge's log lines (not the NATS server's) and prints
// them if the test fails.
func bridgeLog(t *testing.T) *slog.Logger {
	var buf logBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bridge log:\n%s", buf.String())
		}
	})
	h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(filterHandler{h})
}

// filterHandler drops the NATS server's records.
type filterHandler struct{ slog.Handler }

func (f filterHandler) Handle(ctx context.Context, r slog.Record) error {
	nats := false
	r.Attrs(func(a slog.Attr) bool {
		nats = nats || (a.Key == "from" && a.Value.String() == "nats")
		return !nats
	})
	if nats {
		return nil
	}
	return f.Handler.Handle(ctx, r)
}

func (f filterHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return filterHandler{f.Handler.WithAttrs(as)}
}

// waitSide is waitBodies with room for the bridge's copy under load.
func waitSide(t *testing.T, c *collector, want ...string) {
	t.Helper()
	testutil.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := c.bodies(); fmt.Sprint(got) != fmt.Sprint(want) {
			return testutil.Errorf("inbox holds %q, want %q", got, want)
		}
		return nil
	})
}

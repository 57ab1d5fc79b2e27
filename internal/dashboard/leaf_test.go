package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/dashboard"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestLeafDashboardsShowBothSides: a team hub and a leaf joined by ticket
// (two machines); each hub's dashboard shows the agents of both sides, and
// a message from the team hub's Alice to the leaf's Bob shows on both.
func TestLeafDashboardsShowBothSides(t *testing.T) {
	team := start(t)
	tk, err := team.hub.Invite("laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := hub.ParseTicket(tk.String())
	if err != nil {
		t.Fatal(err)
	}
	lh, err := hub.Start(context.Background(), hub.Options{Home: t.TempDir(), Listen: "127.0.0.1:0", Join: &parsed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lh.Shutdown)
	testutil.Eventually(t, func() error {
		if !lh.LinkUp() {
			return testutil.Errorf("the leaf's link is not up")
		}
		return nil
	})
	ld, err := dashboard.New(dashboard.Options{URL: lh.URL(), Token: lh.Token()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ld.Close() })
	leaf := &env{t: t, hub: lh, d: ld}

	alice := agent(t, team.hub, "alice", "Claude Code")
	agent(t, lh, "bob", "Codex")
	teamFeed, leafFeed := team.dial(""), leaf.dial("")
	// The bridge copies each side's presence and messages across the link:
	// on a loaded machine that may take longer than a local change.
	teamFeed.wait, leafFeed.wait = 60*time.Second, 60*time.Second
	for _, s := range []*socket{teamFeed, leafFeed} {
		seen := map[string]bool{}
		s.until("alice and bob", func(f dashboard.Frame) bool {
			if f.Type == dashboard.TypeAgent {
				seen[f.Agent.Name] = true
			}
			return seen["alice"] && seen["bob"]
		})
	}
	if _, err := alice.Send(context.Background(), "bob", "across the link"); err != nil {
		t.Fatal(err)
	}
	teamFeed.until("the message on the team hub", isMessage("across the link"))
	leafFeed.until("the message on the leaf", isMessage("across the link"))
}

package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
)

// TestApprovals: a blocked agent's prompt is in its presence and in the
// team's approvals, also once a message waited long enough to call it
// stuck; it goes with the blocked state.
func TestApprovals(t *testing.T) {
	h := startHub(t)
	bob := register(t, h, "Bob")
	viewer := connect(t, h, "")
	ctx := context.Background()
	ask := &bus.Ask{ID: "a1", Tool: "Bash", Detail: "touch marker", Options: []string{"allow", "deny"}, Since: time.Now().UTC()}
	if err := bob.SetStateAsk(ctx, bus.StateBlocked, ask); err != nil {
		t.Fatal(err)
	}
	if err := bob.SetStuck(ctx, time.Now().Add(-time.Minute), "blocked: Bash touch marker waits"); err != nil {
		t.Fatal(err)
	}
	list, err := viewer.Approvals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Agent != "Bob" || list[0].ID != "a1" || list[0].Detail != "touch marker" {
		t.Fatalf("approvals %+v, want Bob's a1", list)
	}
	agents, err := viewer.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || agents[0].State != bus.StateBlocked || agents[0].Ask == nil {
		t.Fatalf("agents %+v, want Bob blocked with his prompt", agents)
	}
	if err := bob.SetStateAsk(ctx, bus.StateBusy, nil); err != nil {
		t.Fatal(err)
	}
	if list, err := viewer.Approvals(ctx); err != nil || len(list) != 0 {
		t.Fatalf("approvals once busy: %+v %v, want none", list, err)
	}
}

package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// TestDoctorInboxes: doctor checks each live agent's inbox and fails,
// naming the agent and the fix, when it has no consumer or a message is
// stuck; a served inbox passes. relay agents shows a stuck agent with its
// oldest message's age.
func TestDoctorInboxes(t *testing.T) {
	home := privateDir(t)
	h := hubtest.StartAt(t, home, "127.0.0.1:0")
	doctorMemory(t, h.URL(), h.Token())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bob, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if err := bob.Register(ctx); err != nil {
		t.Fatal(err)
	}
	doctor := func() (int, map[string]doctorCheck, string) {
		t.Helper()
		env, out, _ := doctorEnv(t.TempDir(), map[string]string{"RELAY_HOME": home})
		code := Main([]string{"doctor", "--json"}, env)
		var rep doctorReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		checks := map[string]doctorCheck{}
		for _, c := range rep.Checks {
			checks[c.Name] = c
		}
		return code, checks, out.String()
	}

	code, checks, out := doctor()
	if c := checks["inbox bob"]; code != ExitFailure || c.OK || !strings.Contains(c.Detail, "no consumer") || !strings.Contains(c.Fix, "relay stop bob") {
		t.Errorf("a live agent without an inbox: exit %d, check %+v, want a failure naming bob and the fix\n%s", code, c, out)
	}

	ictx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- bob.Inbox(ictx, func(context.Context, *bus.Delivery) {}) }()
	defer func() { stop(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, checks, out = doctor()
		if code == ExitOK && checks["inboxes"].OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a served inbox: exit %d\n%s", code, out)
		}
	}

	if err := bob.SetStuck(ctx, time.Now().Add(-45*time.Second), "busy: it goes in when the agent's turn ends"); err != nil {
		t.Fatal(err)
	}
	env, aout, _ := doctorEnv(t.TempDir(), map[string]string{"RELAY_HOME": home})
	if code := Main([]string{"agents"}, env); code != ExitOK || !regexpLine(aout.String(), `^bob\s.*\sstuck \(oldest 4[5-9]s\)\s`) {
		t.Errorf("relay agents: exit %d, want bob stuck with its oldest message's age:\n%s", code, aout)
	}
	code, checks, out = doctor()
	if c := checks["inbox bob"]; code != ExitFailure || !strings.Contains(c.Detail, "bob is stuck") || !strings.Contains(c.Detail, "busy") || c.Fix == "" {
		t.Errorf("a stuck agent: exit %d, check %+v, want a failure saying bob is stuck and why\n%s", code, c, out)
	}

	// Revoked (relay creds revoke marks it): doctor and relay agents say so;
	// it is no failure of the hub's.
	if err := bob.MarkRevoked(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	env, aout, _ = doctorEnv(t.TempDir(), map[string]string{"RELAY_HOME": home})
	if code := Main([]string{"agents"}, env); code != ExitOK || !regexpLine(aout.String(), `^carol\s.*\soffline \(credentials revoked\)\s`) {
		t.Errorf("relay agents: exit %d, want carol offline, its credentials revoked:\n%s", code, aout)
	}
	_, checks, out = doctor()
	if c := checks["agent carol"]; !c.OK || !strings.Contains(c.Detail, "carol's credentials were revoked") {
		t.Errorf("a revoked agent: check %+v, want it said\n%s", c, out)
	}
}

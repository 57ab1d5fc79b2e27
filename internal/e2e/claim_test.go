package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/identity"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestKilledWrapperNameAtOnce: after kill -9 of Bob's wrapper, relay wrap
// --name Bob on the same machine takes the name at once (its previous
// wrapper's pid is gone), not after its heartbeats age out; a live Bob
// still refuses a second one.
func TestKilledWrapperNameAtOnce(t *testing.T) {
	tm := newTeam(t)
	c := tm.busClient()
	bobPID := func() (int, error) {
		ps, err := c.Agents(context.Background())
		if err != nil {
			return 0, err
		}
		for _, p := range ps {
			if p.Name == "Bob" && p.State != bus.StateOffline {
				return p.PID, nil
			}
		}
		return 0, fmt.Errorf("no live Bob in %+v", ps)
	}
	waitBob := func(pid int) {
		t.Helper()
		testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			got, err := bobPID()
			if err == nil && got != pid {
				err = fmt.Errorf("Bob's pid is %d, want %d", got, pid)
			}
			return err
		})
	}
	first := tm.agent("Bob", "bash", "--norc", "--noprofile")
	waitBob(first.Pid())

	second := tm.agent("Bob", "bash", "--norc", "--noprofile")
	if code := second.Wait(30 * time.Second); code == 0 || !strings.Contains(string(second.Output()), "taken") {
		t.Fatalf("a second Bob beside a live one exited %d:\n%s", code, second.Output())
	}

	first.Signal(syscall.SIGKILL)
	first.Wait(10 * time.Second)
	killed := time.Now()
	third := tm.agent("Bob", "bash", "--norc", "--noprofile")
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if third.Exited() {
			t.Fatalf("relay wrap --name Bob after kill -9 of the previous one was refused:\n%s", third.Output())
		}
		got, err := bobPID()
		if err == nil && got != third.Pid() {
			err = fmt.Errorf("Bob's pid is %d, want %d", got, third.Pid())
		}
		return err
	})
	t.Logf("name taken again %v after the kill", time.Since(killed).Round(time.Millisecond))
}

// TestPresenceRollupByAgent: Mallory's agent, with its own credential (its
// identity file), publishes a presence rollup (KV-Operation PURGE,
// Nats-Rollup: all) on its own presence key. Nobody's presence is wiped:
// Alice stays listed with fresh heartbeats and a second Alice is refused.
func TestPresenceRollupByAgent(t *testing.T) {
	tm := newTeam(t)
	c := tm.busClient()
	alice := tm.agent("Alice", "bash", "--norc", "--noprofile")
	mallory := tm.agent("Mallory", "bash", "--norc", "--noprofile")
	tm.waitAgents("Alice", "Mallory")
	copyTo := filepath.Join(t.TempDir(), "identity.json")
	mallory.Type(fmt.Sprintf("cp \"$RELAY_AGENT_FILE\" %s && echo COPIED-$((40+2))\r", copyTo))
	mallory.WaitOutput("COPIED-42", 10*time.Second)
	id, err := identity.Read(func(string) string { return copyTo })
	if err != nil {
		t.Fatal(err)
	}
	a, err := dialAgent(t, tm.hub, hub.Credential{Token: id.Token, InboxPrefix: id.InboxPrefix})
	if err != nil {
		t.Fatal(err)
	}
	js, err := a.nc.JetStream()
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: "$KV." + bus.PresenceBucket("default") + ".Mallory", Header: nats.Header{}}
	msg.Header.Set("KV-Operation", "PURGE")
	msg.Header.Set("Nats-Rollup", "all")
	_, err = js.PublishMsg(msg, nats.AckWait(2*time.Second))
	t.Logf("rollup with Mallory's credential: %v; server said: %s", err, a.violations())

	after := time.Now()
	testutil.WaitFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		ps, err := c.Agents(context.Background())
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.Name == "Alice" && p.State != bus.StateOffline && p.Seen.After(after.Add(time.Second)) {
				return nil
			}
		}
		return fmt.Errorf("no live Alice with a heartbeat after the rollup in %+v", ps)
	})
	second := tm.agent("Alice", "bash", "--norc", "--noprofile")
	if code := second.Wait(30 * time.Second); code == 0 || !strings.Contains(string(second.Output()), "taken") {
		t.Fatalf("a second Alice after the rollup exited %d:\n%s", code, second.Output())
	}
	if alice.Exited() {
		t.Fatalf("Alice exited:\n%s", alice.Output())
	}
}

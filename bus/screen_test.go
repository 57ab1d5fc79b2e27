package bus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestPresenceShowsCLIAndSkipped(t *testing.T) {
	h := startHub(t)
	alice := connect(t, h, "alice", func(o *bus.Options) { o.Heartbeat = 50 * time.Millisecond })
	alice.SetCLI("Claude Code") // before Register: written with the claim
	ctx := context.Background()
	if err := alice.Register(ctx); err != nil {
		t.Fatal(err)
	}
	watcher := connect(t, h, "")
	agents, err := watcher.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 || agents[0].CLI != "Claude Code" || agents[0].Skipped != 0 {
		t.Fatalf("agents = %+v, want alice with CLI Claude Code and nothing skipped", agents)
	}
	alice.SetSkipped(4096)
	alice.SetCLI("shell")
	testutil.Eventually(t, func() error { // the next heartbeat carries them
		agents, err := watcher.Agents(ctx)
		if err != nil {
			return err
		}
		if agents[0].CLI != "shell" || agents[0].Skipped != 4096 {
			return testutil.Errorf("alice shows CLI %q, skipped %d; want shell, 4096", agents[0].CLI, agents[0].Skipped)
		}
		return nil
	})
}

func TestScreenReachesSubscriber(t *testing.T) {
	h := startHub(t)
	bob := connect(t, h, "bob")
	watcher := connect(t, h, "")
	got := make(chan *nats.Msg, 4)
	sub, err := watcher.Conn().ChanSubscribe(bus.ScreenSubject("default", "bob"), got)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := watcher.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	if err := bob.PublishScreen(bus.Screen{Cols: 80, Rows: 24, Text: "$ make test\nok"}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m.Subject != "relay.default.screen.bob" {
			t.Errorf("subject %q, want relay.default.screen.bob", m.Subject)
		}
		var s bus.Screen
		if err := json.Unmarshal(m.Data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Agent != "bob" || s.Cols != 80 || s.Rows != 24 || s.Text != "$ make test\nok" || s.At.IsZero() {
			t.Errorf("screen = %+v, want bob's 80x24 with its text and a time", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no screen within 5s")
	}
	if err := watcher.PublishScreen(bus.Screen{Text: "x"}); err == nil {
		t.Error("PublishScreen without any agent name succeeded")
	}
}

// TestScreenWatchReachesItsAgent: a viewer's ask for bob's screen reaches
// bob's wrapper, and not carol's.
func TestScreenWatchReachesItsAgent(t *testing.T) {
	h := startHub(t)
	bob := connect(t, h, "bob")
	carol := connect(t, h, "carol")
	viewer := connect(t, h, "")
	asked := make(chan string, 4)
	for _, c := range []*bus.Client{bob, carol} {
		name := c.Name()
		stop, err := c.OnScreenWatch(func() { asked <- name })
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		if err := c.Conn().Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := viewer.WatchScreen("bob"); err != nil {
		t.Fatal(err)
	}
	if err := viewer.WatchScreen("bad name"); err == nil {
		t.Error("WatchScreen of an invalid name succeeded")
	}
	select {
	case who := <-asked:
		if who != "bob" {
			t.Fatalf("%s was asked for its screen, want bob", who)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("bob was not asked within 5s")
	}
	if _, err := viewer.OnScreenWatch(func() {}); err == nil {
		t.Error("OnScreenWatch without an agent name succeeded")
	}
}

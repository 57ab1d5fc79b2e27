package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/patterns"
)

// TestStatePushesInOrder: a burst of busy and idle changes reaches the
// hub in order (it ends listing the agent as the last change said), and
// the turns, with no real work between them (no human key, no message),
// make one idle period: Idle fires once, after them.
func TestStatePushesInOrder(t *testing.T) {
	h := hubtest.Start(t)
	var idles atomic.Int32
	r := startRig(t, Config{Hub: h.URL(), Token: h.Token(), Idle: func() []IdleHandler {
		return []IdleHandler{{After: 50 * time.Millisecond, Handle: func(context.Context, EventInfo) (Result, error) { idles.Add(1); return Result{}, nil }}}
	}})
	watcher := newPeer(t, h.URL(), h.Token(), "Watcher")
	const turns = 200
	for i := 0; i < turns; i++ {
		r.screenBusy(false)
		r.screenBusy(true)
	}
	waitFor(t, "the hub lists Alice busy", func() error {
		if st, err := stateOf(watcher.c, "Alice"); err != nil || st != bus.StateBusy {
			return fmt.Errorf("state %q, %v", st, err)
		}
		return nil
	})
	r.screenBusy(false)
	waitFor(t, "the hub lists Alice idle", func() error {
		if st, err := stateOf(watcher.c, "Alice"); err != nil || st != bus.StateIdle {
			return fmt.Errorf("state %q, %v", st, err)
		}
		return nil
	})
	waitFor(t, "one Idle event", func() error {
		if n := idles.Load(); n != 1 {
			return fmt.Errorf("%d Idle events, want 1", n)
		}
		return nil
	})
}

// TestCommandBurst: a burst of commands from the screen is sent, each once,
// in order.
func TestCommandBurst(t *testing.T) {
	h := hubtest.Start(t)
	bob := newPeer(t, h.URL(), h.Token(), "Bob")
	r := startRig(t, Config{Hub: h.URL(), Token: h.Token()})
	r.screenBusy(false)
	const n = 150
	var want []string
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("message %03d", i)
		want = append(want, body)
		r.s.screenCommand(patterns.Command{NS: "relay", Target: "Bob", Body: body})
	}
	waitFor(t, "Bob gets every message", func() error {
		if got := bob.bodies(); !slices.Equal(got, want) {
			return fmt.Errorf("got %d of %d: %q", len(got), n, got[max(0, len(got)-3):])
		}
		return nil
	})
}

// TestHubAwayThenBack: an agent started while its hub is down is told once
// that its message waits; when the hub is back, the message goes out and
// the hub lists the agent as it is (idle), not as starting.
func TestHubAwayThenBack(t *testing.T) {
	home := t.TempDir()
	h := hubtest.StartAt(t, home, "127.0.0.1:0")
	url, token := h.URL(), h.Token()
	listen := strings.TrimPrefix(url, "nats://")
	h.Shutdown()

	r := startRig(t, Config{Hub: url, Token: token})
	r.screenBusy(false)
	r.s.screenCommand(patterns.Command{NS: "relay", Target: "Bob", Body: "sent while the hub was away"})
	r.waitTyped(t, "The hub is unreachable; your message to Bob waits")

	hubtest.StartAt(t, home, listen)
	bob := newPeer(t, url, token, "Bob")
	waitFor(t, "Bob gets the message", func() error {
		if got := bob.bodies(); !slices.Equal(got, []string{"sent while the hub was away"}) {
			return fmt.Errorf("got %q", got)
		}
		return nil
	})
	waitFor(t, "the hub lists Alice idle", func() error {
		if st, err := stateOf(bob.c, "Alice"); err != nil || st != bus.StateIdle {
			return fmt.Errorf("state %q, %v", st, err)
		}
		return nil
	})
	if n := strings.Count(r.ty.String(), "The hub is unreachable"); n != 1 {
		t.Errorf("told %d times that the hub is unreachable; typed:\n%s", n, r.ty.String())
	}
}

// TestHandlerPanics: a handler or hook that panics is told to the agent in
// one line, and the session goes on: the next command and event work.
func TestHandlerPanics(t *testing.T) {
	var ran atomic.Int32
	r := startRig(t, Config{
		Patterns: []Pattern{
			{Namespace: "boom", Handle: func(context.Context, Match) (Result, error) { panic("kaboom") }},
			{Namespace: "deploy", Handle: func(_ context.Context, m Match) (Result, error) {
				ran.Add(1)
				return Result{Inject: "deployed " + m.Target}, nil
			}},
		},
		Idle: func() []IdleHandler {
			return []IdleHandler{{After: time.Millisecond, Handle: func(context.Context, EventInfo) (Result, error) { panic(errors.New("idle hook bug")) }}}
		},
	})
	r.screenBusy(false)
	r.waitTyped(t, "The Idle hook failed (it panicked: idle hook bug)")
	r.s.putCommand(patterns.Command{NS: "boom", Target: "x", Body: "y"})
	r.waitTyped(t, "The %40boom:x handler crashed %28kaboom%29%3B relay goes on.") // neutralised: an error is outside text
	r.s.putCommand(patterns.Command{NS: "deploy", Target: "staging", Body: "v1"})
	r.waitTyped(t, "deployed staging")
	if ran.Load() != 1 {
		t.Errorf("deploy ran %d times", ran.Load())
	}
}

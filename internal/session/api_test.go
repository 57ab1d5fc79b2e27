package session

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestHandlerContext: an event handler gets the agent's recent output
// lines and acts as its agent through its context (Inject types in).
func TestHandlerContext(t *testing.T) {
	got := make(chan []string, 1)
	r := startRig(t, Config{Idle: func() []IdleHandler {
		return []IdleHandler{{After: time.Millisecond, Handle: func(ctx context.Context, e EventInfo) (Result, error) {
			s, ok := FromContext(ctx)
			if !ok {
				return Result{}, fmt.Errorf("no session in the handler's context")
			}
			s.Inject("injected by " + s.Name())
			got <- e.RecentOutput
			return Result{}, nil
		}}}
	}})
	r.scr.mu.Lock()
	r.scr.text = "$ make\nbuild ok\n\n"
	r.scr.mu.Unlock()
	r.screenBusy(false)
	select {
	case lines := <-got:
		if !slices.Equal(lines, []string{"$ make", "build ok"}) {
			t.Errorf("RecentOutput = %q", lines)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Idle handler never ran")
	}
	r.waitTyped(t, "injected by Alice")
	if _, ok := FromContext(context.Background()); ok {
		t.Error("FromContext outside a handler found a session")
	}
}

// TestIdleWaitsForReady: a session that has not heard from its agent's
// screen yet is not idle: an Idle handler must not run before the agent
// has drawn (it ran with an empty RecentOutput under load).
func TestIdleWaitsForReady(t *testing.T) {
	r := startRig(t, Config{})
	r.s.read(func(*state) {}) // the start's state change is in
	if idle, _ := r.s.events.idle.quiet(); idle {
		t.Fatal("the idle clock counts an agent that has not drawn yet as idle")
	}
	r.screenBusy(false)
	r.s.read(func(*state) {})
	if idle, _ := r.s.events.idle.quiet(); !idle {
		t.Fatal("the idle clock does not count a quiet, ready screen as idle")
	}
}

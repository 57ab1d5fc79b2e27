package session

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/shell"
	"github.com/relayhq/relay/internal/delivery"
)

// TestDirectWaitsForHumanSubmit: through the CLI's own input path (no
// typing, so the human's draft does not hold it), a message that comes
// just after the human submitted a line waits until the agent has shown it
// took that line (busy, then idle again), or until submitWait passed
// without it: OpenCode would otherwise join the two prompts into one turn
// and answer only the later one.
func TestDirectWaitsForHumanSubmit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		busyFirst bool          // the agent shows busy, then idle, before the message comes
		wait      time.Duration // submitWait
		held      bool          // the message waits until the agent was busy
	}{
		{name: "submit not yet taken", wait: time.Hour, held: true},
		{name: "submit taken before the message", busyFirst: true, wait: time.Hour},
		{name: "submit never taken", wait: 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof := shell.Profile()
			prof.Model = true
			src := &directSource{up: true}
			r := newRig(t, Config{Profile: prof})
			r.s.spec.src = src
			r.s.typing.submitWait = tc.wait
			r.start()
			r.screenBusy(false)
			r.s.read(func(*state) {}) // the session has seen it idle

			r.ty.mu.Lock()
			r.ty.submitted = time.Now() // the human pressed Enter on a line
			r.ty.mu.Unlock()
			if tc.busyFirst {
				r.screenBusy(true)
				r.screenBusy(false)
				r.s.read(func(*state) {})
			}
			posts := func() int {
				src.mu.Lock()
				defer src.mu.Unlock()
				return len(src.posts)
			}
			asked := func() int {
				r.ty.mu.Lock()
				defer r.ty.mu.Unlock()
				return r.ty.asked
			}
			before := asked()
			r.s.inbox.queue.Add(delivery.Item{ID: "m1", Text: "[relay] Message from agent Bob (id m1).\n│ hi"})
			if tc.held {
				// The queue asked twice whether anything holds it (or
				// posted at once).
				waitFor(t, "the queue to look at the message", func() error {
					if n := asked() - before; n < 2 && posts() == 0 {
						return fmt.Errorf("asked %d times", n)
					}
					return nil
				})
				if n := posts(); n != 0 {
					t.Fatalf("posted %d times before the agent took the human's line", n)
				}
				r.screenBusy(true)
				r.screenBusy(false)
			}
			waitFor(t, "the message to be posted", func() error {
				if n := posts(); n != 1 {
					return fmt.Errorf("%d posts", n)
				}
				return nil
			})
			if r.ty.String() != "" {
				t.Errorf("typed %q", r.ty.String())
			}
		})
	}
}

// answeringSource is a directSource that reads from its CLI's record
// whether a prompt waits for its answer (agents.Answering).
type answeringSource struct {
	*directSource
	answering, human atomic.Bool
	asked            atomic.Int64 // calls of Answering
}

func (a *answeringSource) Answering() bool                 { a.asked.Add(1); return a.answering.Load() }
func (a *answeringSource) HumanPromptSince(time.Time) bool { return a.human.Load() }

// TestDirectWaitsForAnswer: through the CLI's own input path, a message
// waits while the CLI's record shows a prompt waiting for its answer, and,
// after the human's Enter, until the record holds the human's prompt
// (OpenCode answers only the last of the prompts that reach it before its
// run reads them).
func TestDirectWaitsForAnswer(t *testing.T) {
	for _, tc := range []struct {
		name             string
		answering, human bool // at first
		submit           bool
		release          func(a *answeringSource)
	}{
		{name: "a prompt waits", answering: true, release: func(a *answeringSource) { a.answering.Store(false) }},
		{name: "the human's prompt not stored yet", submit: true, release: func(a *answeringSource) { a.human.Store(true) }},
		{name: "the human's prompt stored", submit: true, human: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof := shell.Profile()
			prof.Model = true
			src := &answeringSource{directSource: &directSource{up: true}}
			src.answering.Store(tc.answering)
			src.human.Store(tc.human)
			r := newRig(t, Config{Profile: prof})
			r.s.spec.src = src
			r.s.typing.submitWait = time.Hour
			r.start()
			r.screenBusy(false)
			r.s.read(func(*state) {})
			if tc.submit {
				r.ty.mu.Lock()
				r.ty.submitted = time.Now()
				r.ty.mu.Unlock()
			}
			posts := func() int {
				src.mu.Lock()
				defer src.mu.Unlock()
				return len(src.posts)
			}
			before := src.asked.Load()
			r.s.inbox.queue.Add(delivery.Item{ID: "m1", Text: "[relay] Message from agent Bob (id m1).\n│ hi"})
			if tc.release != nil {
				waitFor(t, "the queue to look at the message", func() error {
					if n := src.asked.Load() - before; n < 2 && posts() == 0 {
						return fmt.Errorf("asked %d times", n)
					}
					return nil
				})
				if n := posts(); n != 0 {
					t.Fatalf("posted %d times while it must wait", n)
				}
				tc.release(src)
			}
			waitFor(t, "the message to be posted", func() error {
				if n := posts(); n != 1 {
					return fmt.Errorf("%d posts", n)
				}
				return nil
			})
		})
	}
}

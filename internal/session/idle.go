package session

import (
	"context"
	"github.com/relayhq/relay/internal/mailbox"
	"sync"
	"time"

	"github.com/relayhq/relay/internal/config"
)

// The Idle event's schedule when a handler does not give one: the
// configuration's, declared there.
const (
	DefaultIdleAfter = config.DefaultIdleAfter
	DefaultIdleMax   = config.DefaultIdleMax
)

// IdleHandler is an Idle handler with its schedule: it runs once the agent
// has been idle (no output, no typing) for After, once per idle period;
// with Every set, again every Every while the agent stays idle, at most
// Max times in the period.
type IdleHandler struct {
	After, Every time.Duration // zero After: DefaultIdleAfter
	Max          int           // zero: DefaultIdleMax (with Every only)
	Handle       EventFunc
}

// limit is how many times h may run in one idle period.
func (h IdleHandler) limit() int {
	if h.Every <= 0 {
		return 1
	}
	if h.Max <= 0 {
		return DefaultIdleMax
	}
	return h.Max
}

func (h IdleHandler) after() time.Duration {
	if h.After <= 0 {
		return DefaultIdleAfter
	}
	return h.After
}

// idleClock decides when Idle handlers run. An idle period begins with
// real work (the session's start, the human's keys, a peer's message typed
// in) and lasts until the next real work: what relay types on its own (a
// hook's answer, a notice, the primer) and the agent's answer to it never
// begin a new one, so a handler whose text makes the agent busy runs at
// most its limit per period instead of looping. Output and busy moments of
// any cause restart the quiet time that After measures.
//
// Its fields are guarded by mu: the owner sets the state, the delivery
// queue's Done rearms, the clock's goroutine (run) reads. wake is a token,
// not a queue ("something changed: look again"), read by run only.
type idleClock struct {
	mu       sync.Mutex
	wake     mailbox.Signal
	idle     bool      // the agent is idle now
	activity time.Time // its last output, busy moment or key
	period   time.Time // when the current idle period began (real work)
	runs     []idleRuns
}

// idleRuns is what one handler did in the current period.
type idleRuns struct {
	n    int
	last time.Time
}

func newIdleClock(now time.Time) *idleClock {
	return &idleClock{wake: mailbox.NewSignal(), activity: now, period: now}
}

func (c *idleClock) poke() { c.wake.Notify() }

// setBusy records the agent's state (from the owner, on every change).
func (c *idleClock) setBusy(busy bool, now time.Time) {
	c.mu.Lock()
	c.idle = !busy
	c.activity = now
	c.mu.Unlock()
	c.poke()
}

// quiet reports whether the agent is idle and when it last showed
// activity.
func (c *idleClock) quiet() (bool, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idle, c.activity
}

// rearm begins a new idle period: the agent has real work.
func (c *idleClock) rearm(now time.Time) {
	c.mu.Lock()
	c.period, c.runs = now, nil
	if now.After(c.activity) {
		c.activity = now
	}
	c.mu.Unlock()
	c.poke()
}

// due returns the handlers to run now (their runs counted) and how long
// until the next one may be due; lastHuman is the human's last key, which
// is real work.
func (c *idleClock) due(hs []IdleHandler, now, lastHuman time.Time) ([]int, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lastHuman.After(c.period) {
		c.period, c.runs = lastHuman, nil
		if lastHuman.After(c.activity) {
			c.activity = lastHuman
		}
	}
	const never = time.Hour
	if !c.idle || len(hs) == 0 {
		return nil, never
	}
	for len(c.runs) < len(hs) {
		c.runs = append(c.runs, idleRuns{})
	}
	var run []int
	wait := never
	for i, h := range hs {
		r := &c.runs[i]
		if r.n >= h.limit() {
			continue
		}
		at := c.activity.Add(h.after())
		if r.n > 0 {
			if next := r.last.Add(h.Every); next.After(at) {
				at = next
			}
		}
		if !now.Before(at) {
			r.n++
			r.last = now
			run = append(run, i)
			if r.n < h.limit() && h.Every < wait {
				// Its next run is due in Every if nothing happens: the
				// caller must wake then, not only on the agent's activity.
				wait = h.Every
			}
			continue
		}
		if d := at.Sub(now); d < wait {
			wait = d
		}
	}
	return run, wait
}

// idleHandlers returns the Idle handlers with their schedules: those of
// Config.Idle, else the Idle event handlers on the default schedule.
func (s *Session) idleHandlers() []IdleHandler {
	if s.cfg.Idle != nil {
		return s.cfg.Idle()
	}
	if s.cfg.Events == nil {
		return nil
	}
	var out []IdleHandler
	for _, h := range s.cfg.Events(Idle) {
		out = append(out, IdleHandler{Handle: h})
	}
	return out
}

// runIdle runs the Idle handlers when the clock says they are due, until
// ctx ends. They run on the jobs goroutine, one at a time with the other
// slow reactions.
func (s *Session) runIdle(ctx context.Context) {
	s.events.idle.run(ctx, s.idleHandlers(), s.child.in.LastHuman, func(h IdleHandler) {
		s.events.jobs.post(func(ctx context.Context) { s.fireOne(ctx, h.Handle, EventInfo{Event: Idle}) })
	})
}

// run is the clock's goroutine: it calls due for each handler of hs when
// it is due (lastHuman is the human's last key) until ctx ends.
func (c *idleClock) run(ctx context.Context, hs []IdleHandler, lastHuman func() time.Time, due func(IdleHandler)) {
	if len(hs) == 0 {
		return
	}
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		run, wait := c.due(hs, time.Now(), lastHuman())
		for _, i := range run {
			due(hs[i])
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-t.C:
		}
	}
}

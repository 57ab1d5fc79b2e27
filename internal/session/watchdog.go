package session

import (
	"cmp"
	"context"
	"fmt"
	"github.com/relayhq/relay/internal/mailbox"
	"log/slog"
	"sync"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
)

// heldGone is how long after its latest arrival a message a hook held is
// forgotten by the watchdog if it does not come back (it comes back every
// holdRetry while held): it was removed from the inbox meanwhile.
const heldGone = holdRetry + 3*bus.DefaultAckWait

// The watchdog: nothing waits silently. Every incoming message is tracked
// from its first arrival until it is typed (or refused, or failed for
// good); one that waited longer than Config.StuckAfter is reported: its
// sender gets a "stuck" receipt with the reason, once, and the agent's
// presence says stuck with the oldest waiting message's age, which
// `relay agents`, `relay doctor` and the dashboard show. (A consumer that
// stops is rebuilt by the bus's inbox itself.)

// waiters are the incoming messages not yet typed, by id.
type waiters struct {
	mu sync.Mutex
	m  map[string]*waiter
	// some has a token (not a queue) when a message arrived while none
	// waited: the watchdog sleeps while nothing waits (no timer wakes an
	// idle agent).
	some mailbox.Signal
}

type waiter struct {
	d     *bus.Delivery
	since time.Time // first arrival (kept while a hook holds it)
	seen  time.Time // latest arrival
	held  bool      // a MessageReceived hook holds it
	told  bool      // its sender got the stuck receipt
}

func newWaiters() *waiters { return &waiters{m: map[string]*waiter{}, some: mailbox.NewSignal()} }

// none reports whether no message waits.
func (w *waiters) none() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m) == 0
}

// arrive records one arrival of d (a message held before comes again).
func (w *waiters) arrive(d *bus.Delivery, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := d.Envelope.ID
	if x := w.m[id]; x != nil {
		x.d, x.seen, x.held = d, now, false
		return
	}
	w.m[id] = &waiter{d: d, since: now, seen: now}
	if len(w.m) == 1 {
		w.some.Notify()
	}
}

// hold records that a hook held the message id.
func (w *waiters) hold(id string) {
	w.mu.Lock()
	if x := w.m[id]; x != nil {
		x.held = true
	}
	w.mu.Unlock()
}

// gone forgets the message id: typed, refused, or failed for good. Called
// before its final receipt is posted, so that no stuck receipt follows it.
func (w *waiters) gone(id string) {
	w.mu.Lock()
	delete(w.m, id)
	w.mu.Unlock()
}

// overdue reports the oldest message that waited longer than after (zero
// time when none did) and why it waits; each such message's sender gets a
// stuck receipt, once. why says why a message not held by a hook waits.
func (w *waiters) overdue(now time.Time, after time.Duration, why func() string) (oldest time.Time, reason string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var agentWhy string
	for id, x := range w.m {
		if x.held && now.Sub(x.seen) > heldGone {
			delete(w.m, id)
			continue
		}
		age := now.Sub(x.since)
		if age <= after {
			continue
		}
		n++
		r := "held by a MessageReceived hook"
		if !x.held {
			if agentWhy == "" {
				agentWhy = cmp.Or(why(), "waiting to be typed")
			}
			r = agentWhy
		}
		if oldest.IsZero() || x.since.Before(oldest) {
			oldest, reason = x.since, r
		}
		if !x.told {
			x.told = true
			_ = x.d.PostReceipt(bus.StatusStuck, fmt.Sprintf("waited %s to be typed: %s", age.Round(time.Second), r))
		}
	}
	return oldest, reason, n
}

// watchdog checks the waiting messages several times within stuckAfter
// and tells the hub (presence) when the oldest is stuck and when none is
// any more, until ctx ends.
func (s *Session) watchdog(ctx context.Context) {
	after := cmp.Or(s.cfg.StuckAfter, delivery.DefaultStuckAfter)
	s.inbox.waiting.watch(ctx, after, s.waitReason, s.link.client.Load, s.log)
}

// watch is the watchdog's goroutine (see watchdog): why says why a message
// waits, client is the hub's client (nil while there is none).
func (w *waiters) watch(ctx context.Context, after time.Duration, why func() string, client func() *bus.Client, log *slog.Logger) {
	t := time.NewTicker(min(max(after/4, 50*time.Millisecond), time.Second))
	defer t.Stop()
	var said time.Time // the oldest stuck message the hub was told of
	var saidWhy string
	for {
		if said.IsZero() && saidWhy == "" && w.none() {
			// Nothing waits and the hub knows it: sleep until a message
			// arrives (the ticker costs nothing while not read).
			select {
			case <-ctx.Done():
				return
			case <-w.some:
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		oldest, reason, n := w.overdue(now, after, why)
		if oldest.Equal(said) && reason == saidWhy {
			continue
		}
		if !oldest.IsZero() && said.IsZero() {
			log.Warn("incoming messages stuck", "count", n, "oldest", now.Sub(oldest).Round(time.Second), "reason", reason)
		} else if oldest.IsZero() {
			log.Info("no incoming message stuck any more")
		}
		c := client()
		if c == nil {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.SetStuck(pctx, oldest, reason)
		cancel()
		if err != nil {
			log.Debug("presence", "stuck", !oldest.IsZero(), "err", err)
		}
		said, saidWhy = oldest, reason // the heartbeat carries it if this push failed
	}
}

package session

import (
	"context"
	"sync"
	"time"

	"github.com/relayhq/relay/bus"
)

// lease tells the hub that the messages of one batch that still wait to
// be typed are being worked on (InProgress every leaseEvery, well inside
// the inbox's ack wait), so that none is delivered again meanwhile: one
// goroutine and one timer a batch, not one a message.
type lease struct {
	// held, when set, says why the messages cannot be typed now ("" when
	// they can); it is asked once, heldAfter into the lease, and what
	// still waits then is reported held for that reason: a message typed
	// within moments (a stream into a shell) is never said held, and the
	// hub stores one receipt for it, not two.
	held func() string

	mu    sync.Mutex
	left  map[*bus.Delivery]bool
	empty chan struct{} // closed once every message was typed or failed
}

func newLease() *lease {
	return &lease{left: map[*bus.Delivery]bool{}, empty: make(chan struct{})}
}

// add puts d under the lease.
func (l *lease) add(d *bus.Delivery) {
	l.mu.Lock()
	l.left[d] = true
	l.mu.Unlock()
}

// done ends d's lease (typed or failed); calling it again does nothing.
func (l *lease) done(d *bus.Delivery) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.left[d] {
		return
	}
	delete(l.left, d)
	if len(l.left) == 0 {
		close(l.empty)
	}
}

// run renews the lease of what is left every `every` until nothing is
// left or ctx ends.
func (l *lease) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var late <-chan time.Time
	if l.held != nil {
		lt := time.NewTimer(heldAfter)
		defer lt.Stop()
		late = lt.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.empty:
			return
		case <-late:
			l.sayHeld()
		case <-t.C:
			l.mu.Lock()
			left := make([]*bus.Delivery, 0, len(l.left))
			for d := range l.left {
				left = append(left, d)
			}
			l.mu.Unlock()
			for _, d := range left {
				_ = d.InProgress()
			}
		}
	}
}

// sayHeld reports what still waits held, with the reason held gives now.
// The lease's lock is held while the receipts are posted, so that a
// message typed meanwhile (done is called before its "delivered" receipt
// is posted) is never said held after it was said delivered.
func (l *lease) sayHeld() {
	why := l.held()
	if why == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for d := range l.left {
		_ = d.PostReceipt(bus.StatusHeld, why)
	}
}

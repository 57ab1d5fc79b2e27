package bus

import (
	"context"
	"sync"
	"time"

	"github.com/relayhq/relay/internal/mailbox"
)

// batchWait bounds how long a batch waits for a message the hub said it
// still held (see InboxBatches) before it is handed over without it: only
// a fallback, for a message removed meanwhile or a pull that stalled.
const batchWait = 20 * time.Millisecond

// MaxBatch is the size at which InboxBatches hands a batch over even
// though the hub holds more (the unsettled deliveries are capped at
// InboxHold by the inbox's consumer).
const MaxBatch = 256

// InboxBatches is Inbox, but handle receives the deliveries in batches, in
// order: a batch ends with a message after which the hub held nothing more
// for the agent when it sent it (its count of pending messages was zero),
// so that a burst that reached the hub before the agent took it, or while
// the agent was busy, is handed over at once, whole, instead of message by
// message. Nothing waits on a timer while the hub has nothing more; a batch
// whose announced rest does not come within batchWait is handed over as it
// is. handle is called one batch at a time, from a goroutine of its own
// (the inbox goes on taking messages from the hub meanwhile), and may
// settle the deliveries later, from any goroutine.
func (c *Client) InboxBatches(ctx context.Context, handle func(context.Context, []*Delivery)) error {
	return c.InboxBatchesOf(ctx, MaxBatch, handle)
}

// InboxBatchesOf is InboxBatches with batches handed over once they hold
// n deliveries, even though the hub holds more; what arrived while
// handle ran goes in the next batch, whole, so a batch may hold more than
// n. A small n suits a consumer that takes a stream piece by piece at
// no cost (a plain shell, one line a message): it starts typing the first
// messages of a long burst while the rest still arrive, instead of waiting
// for a whole block. The inbox holds HoldOf(n) deliveries unsettled at
// most; the rest wait on the hub.
func (c *Client) InboxBatchesOf(ctx context.Context, n int, handle func(context.Context, []*Delivery)) error {
	b := &batcher{ctx: ctx, handle: handle, max: max(n, 1), wait: c.batchWait, wake: mailbox.NewSignal(), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	err := c.consume(ctx, HoldOf(b.max), b.add)
	close(b.stop)
	<-b.done
	b.mu.Lock()
	rest := b.take()
	b.mu.Unlock()
	if len(rest) > 0 {
		handle(ctx, rest)
	}
	return err
}

// batcher gathers the deliveries of one batch while the previous one is
// being handed over, so that the hub's messages keep flowing in (the
// consumer's pulls stay outstanding) while handle runs. It is not a
// mailbox.Mailbox: the batch is handed over whole, only once complete
// (complete is decided under the same lock as its timer), and what arrives
// while handle runs joins it; its wake-up is a mailbox.Signal.
type batcher struct {
	ctx    context.Context
	handle func(context.Context, []*Delivery)
	max    int
	wait   time.Duration // batchWait

	wake mailbox.Signal // a batch is complete
	stop chan struct{}  // the inbox ended: run returns
	done chan struct{}  // closed when run returned

	mu      sync.Mutex
	batch   []*Delivery
	full    bool        // batch is complete: hand it over
	last    time.Time   // when the latest message was added
	timer   *time.Timer // armed while an incomplete batch waits
	waiting bool        // the timer is armed
}

// add takes one message the hub sent (d is nil when it was refused) and
// the number of messages the hub still held back when it sent it.
func (b *batcher) add(d *Delivery, pending uint64) {
	b.mu.Lock()
	if d != nil {
		b.batch = append(b.batch, d)
	}
	if len(b.batch) == 0 {
		b.mu.Unlock()
		return
	}
	if pending == 0 || len(b.batch) >= b.max {
		b.full = true
		b.mu.Unlock()
		b.wake.Notify()
		return
	}
	// The rest was announced: wait for it, but no longer than batchWait
	// after the latest message (one timer for the whole batch).
	b.last = time.Now()
	if !b.waiting {
		b.waiting = true
		if b.timer == nil {
			b.timer = time.AfterFunc(b.wait, b.expire)
		} else {
			b.timer.Reset(b.wait)
		}
	}
	b.mu.Unlock()
}

// expire hands over a batch whose announced rest did not come within
// batchWait of its latest message.
func (b *batcher) expire() {
	b.mu.Lock()
	if !b.waiting {
		b.mu.Unlock()
		return
	}
	if left := b.wait - time.Since(b.last); left > 0 {
		b.timer.Reset(left)
		b.mu.Unlock()
		return
	}
	b.waiting = false
	if len(b.batch) > 0 {
		b.full = true
	}
	b.mu.Unlock()
	b.wake.Notify()
}

// run hands over each complete batch, one at a time, in order, until the
// inbox ends.
func (b *batcher) run() {
	defer close(b.done)
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		}
		b.mu.Lock()
		var batch []*Delivery
		if b.full {
			batch = b.take()
		}
		b.mu.Unlock()
		if len(batch) > 0 {
			b.handle(b.ctx, batch)
		}
	}
}

// take removes and returns the gathered batch; b.mu is held.
func (b *batcher) take() []*Delivery {
	batch := b.batch
	b.batch, b.full, b.waiting = nil, false, false
	return batch
}

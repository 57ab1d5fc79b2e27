package bus

import (
	"context"
	"sync"
	"time"
)

// batchWait bounds how long a batch waits for a message the hub said it
// still held (see InboxBatches) before it is handed over without it: only
// a fallback, for a message removed meanwhile or a pull that stalled.
const batchWait = 20 * time.Millisecond

// maxBatch caps the deliveries of one batch (the unsettled ones are capped
// at 1000 by the inbox's consumer).
const maxBatch = 256

// InboxBatches is Inbox, but handle receives the deliveries in batches, in
// order: a batch ends with a message after which the hub held nothing more
// for the agent when it sent it (its count of pending messages was zero),
// so that a burst that reached the hub before the agent took it, or while
// the agent was busy, is handed over at once, whole, instead of message by
// message. Nothing waits on a timer while the hub has nothing more; a batch
// whose announced rest does not come within batchWait is handed over as it
// is. handle is called one batch at a time and may settle the deliveries
// later, from any goroutine.
func (c *Client) InboxBatches(ctx context.Context, handle func(context.Context, []*Delivery)) error {
	b := &batcher{ctx: ctx, handle: handle}
	err := c.consume(ctx, b.add)
	b.flush(nil)
	return err
}

// batcher gathers the deliveries of one batch.
type batcher struct {
	ctx    context.Context
	handle func(context.Context, []*Delivery)

	mu    sync.Mutex // held while handle runs: batches go out in order
	batch []*Delivery
	timer *time.Timer
	gen   int // counts flushes, so that a stale timer flushes nothing
}

// add takes one message the hub sent (d is nil when it was refused) and
// the number of messages the hub still held back when it sent it.
func (b *batcher) add(d *Delivery, pending uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if d != nil {
		b.batch = append(b.batch, d)
	}
	if pending == 0 || len(b.batch) >= maxBatch {
		b.flushLocked()
		return
	}
	gen := b.gen
	b.timer = time.AfterFunc(batchWait, func() { b.flush(&gen) })
}

// flush hands over what was gathered; with gen, only if no flush came
// since gen was taken.
func (b *batcher) flush(gen *int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen != nil && *gen != b.gen {
		return
	}
	b.flushLocked()
}

func (b *batcher) flushLocked() {
	b.gen++
	if len(b.batch) == 0 {
		return
	}
	batch := b.batch
	b.batch = nil
	b.handle(b.ctx, batch)
}

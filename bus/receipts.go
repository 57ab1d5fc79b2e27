package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/relayhq/relay/internal/mailbox"
)

// receiptFlushWait bounds how long Close waits for the receipts posted
// before it to be stored.
const receiptFlushWait = 2 * time.Second

// receiptBatch caps the receipts published together in one round.
const receiptBatch = 512

// posted is one receipt waiting to be stored, and what to do once it is;
// or, with flushed set, a flush's mark in the queue.
type posted struct {
	p       pub
	then    func(error)   // nil, or called once the hub stored it (nil) or refused it
	flushed chan struct{} // closed once every receipt posted before it was handled
}

// receipter stores receipts in the background, in the order they were
// posted, many in flight at once: the agent's typing never waits for the
// hub's acknowledgement of a receipt. A receipt the hub does not
// acknowledge is published again (same id) until it is stored or the
// client closes.
type receipter struct {
	c       *Client
	q       *mailbox.Mailbox[posted]
	once    sync.Once
	started atomic.Bool   // run was started: something was posted
	done    chan struct{} // closed when run returned
	ctx     context.Context
	stop    context.CancelFunc
}

func newReceipter(c *Client) *receipter {
	ctx, cancel := context.WithCancel(context.Background())
	return &receipter{c: c, q: mailbox.New[posted](), done: make(chan struct{}), ctx: ctx, stop: cancel}
}

// post queues one receipt; then, if not nil, is called from the
// receipter's goroutine with the outcome.
func (r *receipter) post(p posted) {
	r.once.Do(func() {
		r.started.Store(true)
		go r.run()
	})
	r.q.Put(p)
}

func (r *receipter) run() {
	defer close(r.done)
	for {
		select {
		case <-r.ctx.Done():
			r.fail(r.ctx.Err())
			return
		case <-r.q.Ready():
		}
		for round := r.q.TakeN(receiptBatch); len(round) > 0; round = r.q.TakeN(receiptBatch) {
			r.publish(round)
		}
	}
}

// publish stores one round of receipts, then tells each its outcome and
// each flush mark in it that what came before was handled.
func (r *receipter) publish(round []posted) {
	ps := make([]pub, 0, len(round))
	for _, p := range round {
		if p.flushed == nil {
			ps = append(ps, p.p)
		}
	}
	var errs []error
	if len(ps) > 0 {
		errs = r.c.publishAll(r.ctx, ps)
	}
	i := 0
	for _, p := range round {
		if p.flushed != nil {
			continue
		}
		if err := errs[i]; err != nil {
			r.c.log.Warn("receipt not stored", "subject", ps[i].subj, "err", err)
		}
		if p.then != nil {
			p.then(errs[i])
		}
		i++
	}
	for _, p := range round {
		if p.flushed != nil {
			close(p.flushed)
		}
	}
}

// fail tells every receipt still queued that it was not stored.
func (r *receipter) fail(err error) {
	for _, p := range r.q.TakeAll() {
		switch {
		case p.flushed != nil:
			close(p.flushed)
		case p.then != nil:
			p.then(fmt.Errorf("receipt not stored: %w", err))
		}
	}
}

// flush waits until every receipt posted so far was handled, or the wait
// ran out; then it stops the receipter.
func (r *receipter) flush(wait time.Duration) {
	if r.started.Load() {
		mark := make(chan struct{})
		r.q.Put(posted{flushed: mark})
		select {
		case <-mark:
		case <-r.done: // stopped before: nothing is handled any more
		case <-time.After(wait):
			r.c.log.Warn("closing with receipts not stored", "after", wait)
		}
	}
	r.stop()
}

// receiptPub encodes a receipt of this client's agent for the message env.
func (c *Client) receiptPub(env Envelope, st Status, reason string) (pub, error) {
	return c.receiptPubOf(Receipt{ID: env.ID, From: env.From, Status: st, Reason: reason})
}

// receiptPubOf encodes r (its ID, From, Status, Reason and Answer set) as
// this client's agent's receipt, now.
func (c *Client) receiptPubOf(r Receipt) (pub, error) {
	if err := ValidName("message id", r.ID); err != nil {
		return pub{}, fmt.Errorf("receipt: %w", err)
	}
	r.Workspace, r.Agent, r.Time = c.opts.Workspace, c.opts.Name, time.Now().UTC()
	data, err := json.Marshal(r)
	if err != nil {
		return pub{}, fmt.Errorf("receipt: %w", err)
	}
	msgID := c.dedupID(r.From, r.ID, string(r.Status))
	return pub{ReceiptSubject(c.opts.Workspace, r.ID), data, msgID}, nil
}

// PostReceipt is Receipt without the wait: the receipt is stored in the
// background, in the order posted, and published again while the hub does
// not acknowledge it; Close waits a little for what is still unstored.
func (c *Client) PostReceipt(env Envelope, st Status, reason string) error {
	p, err := c.receiptPub(env, st, reason)
	if err != nil {
		return err
	}
	c.receipts.post(posted{p: p})
	return nil
}

// PostAnswered records in the background, as PostReceipt does, that this
// client's agent answered the message env with its message answer.
func (c *Client) PostAnswered(env, answer Envelope) error {
	p, err := c.receiptPubOf(Receipt{ID: env.ID, From: env.From, Status: StatusAnswered,
		Reason: "by " + answer.ID, Answer: &answer})
	if err != nil {
		return err
	}
	c.receipts.post(posted{p: p})
	return nil
}

// PostReceipt is Client.PostReceipt for this message.
func (d *Delivery) PostReceipt(st Status, reason string) error {
	return d.c.PostReceipt(d.Envelope, st, reason)
}

// AckWithReceipt reports status st (with an optional reason) for the
// message and acknowledges it once the receipt is stored, without waiting
// for either: a wrapper that dies before the receipt is stored has the
// message delivered again (the journal tells it was typed, and the receipt
// is said then), so a receipt is never lost to an early Ack. A receipt the
// hub refuses is logged, and the message acknowledged all the same.
func (d *Delivery) AckWithReceipt(st Status, reason string) error {
	p, err := d.c.receiptPub(d.Envelope, st, reason)
	if err != nil {
		return errors.Join(err, d.Ack())
	}
	d.c.receipts.post(posted{p: p, then: func(err error) {
		// Closing before the receipt was stored: no Ack, so that the
		// message comes back and its receipt is said then.
		if err == nil || !(errors.Is(err, context.Canceled) || errors.Is(err, nats.ErrConnectionClosed)) {
			_ = d.Ack()
		}
	}})
	return nil
}

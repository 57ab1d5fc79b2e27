package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrOutboxFull is returned by Outbox.Post when Size messages already wait.
var ErrOutboxFull = errors.New("outbox full")

// OutboxOptions configure NewOutbox; the zero value means defaults.
type OutboxOptions struct {
	// Size bounds the messages waiting to be stored; zero means 256.
	Size int
	// OnSent is called (from the outbox's goroutine) once per message with
	// the stored envelope and Send's error (nil, ErrUnknownAgent, or why it
	// was refused). Nil ignores results.
	OnSent func(Envelope, error)
}

// Outbox sends messages in the background, in order, so that an agent's
// output never waits for the hub: while the hub is unreachable messages
// queue (at most Size, beyond that Post fails) and each is retried with the
// same id until the hub stores it. Close it.
type Outbox struct {
	c    *Client
	o    OutboxOptions
	q    chan Message
	mu   sync.Mutex
	n    int // queued or being sent
	stop context.CancelFunc
	done chan struct{}
}

// NewOutbox starts an outbox sending through c.
func (c *Client) NewOutbox(o OutboxOptions) *Outbox {
	if o.Size <= 0 {
		o.Size = 256
	}
	ctx, cancel := context.WithCancel(context.Background())
	ob := &Outbox{c: c, o: o, q: make(chan Message, o.Size), stop: cancel, done: make(chan struct{})}
	go ob.run(ctx)
	return ob
}

// Post queues m and returns at once; Post gives it its id here, so that
// it is the same on every try. It returns the id the message will
// carry, or ErrOutboxFull.
func (ob *Outbox) Post(m Message) (string, error) {
	if m.ID == "" {
		m.ID = NewID()
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.n >= ob.o.Size {
		return "", fmt.Errorf("%w: %d messages wait for the hub", ErrOutboxFull, ob.n)
	}
	ob.n++
	ob.q <- m // never blocks: n <= Size = cap(q)
	return m.ID, nil
}

// Len is the number of messages not yet stored by the hub.
func (ob *Outbox) Len() int {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.n
}

// outboxBatch caps the messages the outbox has in flight at once.
const outboxBatch = 256

// run sends what is posted: everything that waits goes out together, all
// publishes in flight at once (SendAll), and OnSent hears of each in the
// order posted. An agent that writes 300 messages at once has them stored
// in a few round trips instead of 300.
func (ob *Outbox) run(ctx context.Context) {
	defer close(ob.done)
	for {
		var batch []Message
		select {
		case <-ctx.Done():
			return
		case m := <-ob.q:
			batch = append(batch, m)
		}
	more:
		for len(batch) < outboxBatch {
			select {
			case m := <-ob.q:
				batch = append(batch, m)
			default:
				break more
			}
		}
		rs := ob.sendAll(ctx, batch)
		for _, r := range rs {
			if ctx.Err() != nil && r.Err != nil {
				return // closing: the message stays counted as unsent
			}
			ob.mu.Lock()
			ob.n--
			ob.mu.Unlock()
			if ob.o.OnSent != nil {
				ob.o.OnSent(r.Envelope, r.Err)
			}
		}
	}
}

// sendAll sends ms until the hub stores each, refuses it for good, or ctx
// ends: what the hub did not acknowledge in time goes again, with the same
// ids (the hub keeps one copy).
func (ob *Outbox) sendAll(ctx context.Context, ms []Message) []Sent {
	out := make([]Sent, len(ms))
	todo := make([]int, len(ms))
	for i := range todo {
		todo[i] = i
	}
	for len(todo) > 0 {
		sub := make([]Message, len(todo))
		for k, i := range todo {
			sub[k] = ms[i]
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		rs := ob.c.SendAll(sctx, sub)
		cancel()
		var again []int
		for k, i := range todo {
			out[i] = rs[k]
			if rs[k].Err != nil && ctx.Err() == nil && errors.Is(rs[k].Err, context.DeadlineExceeded) {
				again = append(again, i)
			}
		}
		if len(again) > 0 {
			ob.c.log.Warn("outbox: hub unreachable; will retry", "messages", len(again), "err", out[again[0]].Err)
		}
		todo = again
	}
	return out
}

// Close waits until every queued message is stored or ctx ends, then stops
// the outbox. It returns an error saying how many messages were not sent.
func (ob *Outbox) Close(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for ob.Len() > 0 {
		select {
		case <-ctx.Done():
			ob.stop()
			<-ob.done
			return fmt.Errorf("outbox closed with %d messages not sent: %w", ob.Len(), ctx.Err())
		case <-t.C:
		}
	}
	ob.stop()
	<-ob.done
	return nil
}

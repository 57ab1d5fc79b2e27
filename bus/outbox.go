package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nuid"
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

// Post queues m and returns at once. It returns the id the message will
// carry, or ErrOutboxFull.
func (ob *Outbox) Post(m Message) (string, error) {
	if m.ID == "" {
		m.ID = nuid.Next()
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

func (ob *Outbox) run(ctx context.Context) {
	defer close(ob.done)
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-ob.q:
			env, err := ob.sendOne(ctx, m)
			if ctx.Err() != nil && err != nil {
				return // closing: the message stays counted as unsent
			}
			ob.mu.Lock()
			ob.n--
			ob.mu.Unlock()
			if ob.o.OnSent != nil {
				ob.o.OnSent(env, err)
			}
		}
	}
}

// sendOne retries m until the hub stores it, it is refused for good, or
// ctx ends.
func (ob *Outbox) sendOne(ctx context.Context, m Message) (Envelope, error) {
	for {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		env, err := ob.c.SendMessage(sctx, m)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return env, err
		}
		ob.c.log.Warn("outbox: hub unreachable; will retry", "id", m.ID, "to", m.To, "err", err)
	}
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

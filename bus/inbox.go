package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Delivery is one message taken from the agent's inbox. It stays in the
// inbox until Ack; Nak hands it back for another delivery; without either
// it comes back after Options.AckWait (InProgress restarts that clock).
// The same message may come more than once (after a crash or a Nak): use
// Envelope.ID and NumDelivered to drop repeats.
type Delivery struct {
	Envelope Envelope
	// Seq is the message's sequence number in the workspace's stream.
	Seq uint64
	// NumDelivered is 1 on the first delivery, 2 on the second, ...
	// counted since the inbox last resumed in order (see Inbox): use the
	// envelope's ID to tell a repeat.
	NumDelivered uint64

	msg jetstream.Msg
	c   *Client
	fl  *inflight
}

// Ack removes the message from the inbox: call it once the message reached
// the agent (or a queue that survives a crash).
func (d *Delivery) Ack() error {
	d.fl.done(d.Seq)
	return d.msg.Ack()
}

// Nak hands the message back to be delivered again after delay (at once
// for zero).
func (d *Delivery) Nak(delay time.Duration) error {
	d.fl.done(d.Seq)
	if delay <= 0 {
		return d.msg.Nak()
	}
	return d.msg.NakWithDelay(delay)
}

// InProgress tells the hub the message is still being worked on, so that
// it is not delivered again for another AckWait.
func (d *Delivery) InProgress() error { return d.msg.InProgress() }

// Receipt reports the message's delivery status to its sender and the log.
func (d *Delivery) Receipt(ctx context.Context, st Status, reason string) error {
	return d.c.Receipt(ctx, d.Envelope, st, reason)
}

// Fail removes the message from the inbox for good and reports it failed
// with reason.
func (d *Delivery) Fail(ctx context.Context, reason string) error {
	d.fl.done(d.Seq)
	err := d.msg.TermWithReason(reason)
	return errors.Join(err, d.c.Receipt(ctx, d.Envelope, StatusFailed, reason))
}

// inflight tracks deliveries handed out and not yet settled, so that Inbox
// can hand them back when it returns.
type inflight struct {
	mu   sync.Mutex
	msgs map[uint64]jetstream.Msg
}

func (f *inflight) add(seq uint64, m jetstream.Msg) {
	f.mu.Lock()
	f.msgs[seq] = m
	f.mu.Unlock()
}

func (f *inflight) done(seq uint64) {
	f.mu.Lock()
	delete(f.msgs, seq)
	f.mu.Unlock()
}

func (f *inflight) nakAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for seq, m := range f.msgs {
		_ = m.Nak()
		delete(f.msgs, seq)
	}
}

// An inbox's pull request lasts pullExpiry and the hub confirms it every
// pullHeartbeat; two missed heartbeats make the client pull again. The
// library's defaults (30 s, 15 s) stall an inbox for 30 s when its pull
// met no consumer leader (a cluster node just went down, or the consumer
// was being created): measured on a three-node cluster under load.
const (
	pullExpiry    = 10 * time.Second
	pullHeartbeat = 2 * time.Second
)

// pullBatch is how many messages one pull request asks the hub for: a
// burst comes in few round trips.
const pullBatch = 64

// Inbox receives the agent's messages, oldest first, and calls handle for
// each valid one, one at a time, until ctx is done; then it hands back
// (Nak) the deliveries not yet acknowledged and returns nil. The inbox is a
// durable JetStream consumer named after the agent: what arrives while no
// Inbox runs waits. Envelopes that fail validation (from a foreign client)
// are logged, removed and reported failed to their sender where possible;
// handle never sees them. handle may return before it settles a delivery
// (Ack, Nak or Fail from any goroutine later); up to 1000 deliveries may be
// unsettled at once.
func (c *Client) Inbox(ctx context.Context, handle func(context.Context, *Delivery)) error {
	return c.consume(ctx, func(d *Delivery, _ uint64) {
		if d != nil {
			handle(ctx, d)
		}
	})
}

// consume runs the inbox (see Inbox), calling each for every message the
// hub hands over, in order, one at a time: with its valid delivery (nil for
// an envelope that was refused) and how many messages of the inbox the hub
// still held back when it sent this one.
func (c *Client) consume(ctx context.Context, each func(d *Delivery, pending uint64)) error {
	if c.opts.Name == "" {
		return fmt.Errorf("inbox: %w: the client has no agent name", ErrNotRegistered)
	}
	ws, name := c.opts.Workspace, c.opts.Name
	cfg := jetstream.ConsumerConfig{
		Durable:        name,
		Description:    "inbox of " + name,
		FilterSubjects: []string{InboxSubject(ws, name), SenderInboxSubject(ws, name, "*")},
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        c.opts.AckWait,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		MaxDeliver:     -1,
		MaxAckPending:  1000,
	}
	cons, err := c.openInbox(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open inbox of %s: %w", name, err)
	}
	if cons == nil { // ctx ended or the client closed while the hub was away
		return nil
	}
	fl := &inflight{msgs: map[uint64]jetstream.Msg{}}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if ctx.Err() != nil {
			_ = m.Nak()
			return
		}
		c.deliver(ctx, m, fl, each)
	}, jetstream.PullMaxMessages(pullBatch), jetstream.PullExpiry(pullExpiry), jetstream.PullHeartbeat(pullHeartbeat), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if ctx.Err() == nil {
			c.log.Warn("inbox", "err", err)
		}
	}))
	if err != nil {
		return fmt.Errorf("consume inbox of %s: %w", name, err)
	}
	select {
	case <-ctx.Done():
	case <-c.closed:
	}
	if c.nc.IsConnected() {
		cc.Drain() // what was fetched already comes to the callback, which hands it back
		select {
		case <-cc.Closed():
		case <-c.closed:
		case <-time.After(5 * time.Second):
		}
	} else {
		cc.Stop() // fetched messages come back after AckWait
	}
	fl.nakAll()
	return nil
}

// openInbox creates or resumes the inbox's consumer, trying again while
// the hub does not answer (it went down, or a cluster is electing a
// leader): an agent whose inbox failed to open once would otherwise
// receive nothing for the rest of its session. It returns a nil consumer
// when ctx ends or the client is closed first, and an error the hub gave
// (a refused configuration or permission) at once.
func (c *Client) openInbox(ctx context.Context, cfg jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	wait := 250 * time.Millisecond
	resumed := false // once the resume point is settled it is kept: the old consumer may be gone
	for {
		var err error
		if !resumed {
			err = c.resumeInOrder(ctx, &cfg)
			if permanent(err) {
				// Best effort: the inbox still works, only a crash's
				// leftovers may come back late.
				c.log.Warn("inbox cannot resume in order", "err", err)
				cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverAllPolicy, 0
				err = nil
			}
			resumed = err == nil
		}
		if err == nil {
			var cons jetstream.Consumer
			if cons, err = c.stream.CreateOrUpdateConsumer(ctx, cfg); err == nil {
				return cons, nil
			}
			if permanent(err) {
				return nil, err
			}
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		c.log.Warn("inbox cannot open yet; trying again", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil, nil
		case <-c.closed:
			return nil, nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// permanent reports whether err is an answer of the hub (or a closed
// client) that trying again would not change, rather than a hub that did
// not answer.
func permanent(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) || errors.Is(err, nats.ErrConnectionClosed)
}

func (c *Client) deliver(ctx context.Context, m jetstream.Msg, fl *inflight, each func(*Delivery, uint64)) {
	md, err := m.Metadata()
	if err != nil {
		c.log.Error("inbox: message without metadata", "subject", m.Subject(), "err", err)
		each(nil, 0)
		return
	}
	env, err := ParseEnvelope(m.Data())
	if err == nil && env.Workspace != c.opts.Workspace {
		err = invalid("workspace is %q but it came through workspace %q", env.Workspace, c.opts.Workspace)
	}
	if err == nil && env.To != c.opts.Name && env.To != Broadcast {
		err = invalid("addressed to %q but it came to the inbox of %q", env.To, c.opts.Name)
	}
	if err == nil {
		err = checkSender(m.Subject(), env)
	}
	if err != nil {
		c.reject(ctx, m, md.Sequence.Stream, env, err)
		each(nil, md.NumPending)
		return
	}
	fl.add(md.Sequence.Stream, m)
	each(&Delivery{Envelope: env, Seq: md.Sequence.Stream, NumDelivered: md.NumDelivered, msg: m, c: c, fl: fl}, md.NumPending)
}

// reject logs why an incoming envelope is refused, removes it from the
// inbox and tells its sender when the envelope says who that is.
func (c *Client) reject(ctx context.Context, m jetstream.Msg, seq uint64, env Envelope, reason error) {
	c.log.Warn("rejected incoming envelope", "subject", m.Subject(), "seq", seq, "bytes", len(m.Data()), "reason", reason)
	_ = m.TermWithReason(reason.Error())
	if parts := strings.Split(m.Subject(), "."); len(parts) == 5 {
		// The failure is the sender's, as the server vouches for it: a
		// forged from must not mark another agent's message failed.
		env.From = parts[4]
	}
	if ValidName("message id", env.ID) != nil || ValidName("sender", env.From) != nil {
		return
	}
	env.Workspace = c.opts.Workspace
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := c.Receipt(rctx, env, StatusFailed, reason.Error()); err != nil {
		c.log.Warn("could not report rejected envelope", "id", env.ID, "err", err)
	}
}

// resumeInOrder keeps the inbox in order after a crash. Messages handed to
// an agent's previous wrapper and never acknowledged would come back only
// after AckWait, behind newer ones; so when some are pending, the consumer
// is made anew from the first unacknowledged message on, and everything
// after it comes again in order (what was typed already is known to the
// wrapper's journal and not typed twice).
func (c *Client) resumeInOrder(ctx context.Context, cfg *jetstream.ConsumerConfig) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	old, err := c.stream.Consumer(ctx, cfg.Durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	info, err := old.Info(ctx)
	if err != nil {
		return err
	}
	if info.NumAckPending == 0 {
		return nil
	}
	if err := c.stream.DeleteConsumer(ctx, cfg.Durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return err
	}
	cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
	cfg.OptStartSeq = info.AckFloor.Stream + 1
	c.log.Info("inbox resumes in order", "from_seq", cfg.OptStartSeq, "pending", info.NumAckPending)
	return nil
}

// checkSender binds an envelope to the subject it came on: one sent with a
// sender token (an agent's, which the server lets only that agent's
// credential publish) must name that sender in from and cannot claim to be
// a human's. One without (the administrator's token) is taken as it says.
func checkSender(subject string, env Envelope) error {
	parts := strings.Split(subject, ".")
	if len(parts) != 5 {
		return nil
	}
	if env.From != parts[4] {
		return invalid("from %q but sent by %q", env.From, parts[4])
	}
	if env.Human {
		return invalid("marked human but sent by agent %q", parts[4])
	}
	return nil
}

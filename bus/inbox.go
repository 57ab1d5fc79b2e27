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
	d.fl.handBack(d.Seq)
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
// can hand them back when it returns, and knows the inbox's acknowledged
// floor without asking the hub (see floor).
type inflight struct {
	mu     sync.Mutex
	msgs   map[uint64]jetstream.Msg
	back   map[uint64]bool // handed back (Nak): they come again
	newest uint64          // the highest sequence delivered
}

func newInflight() *inflight {
	return &inflight{msgs: map[uint64]jetstream.Msg{}, back: map[uint64]bool{}}
}

func (f *inflight) add(seq uint64, m jetstream.Msg) {
	f.mu.Lock()
	f.msgs[seq] = m
	delete(f.back, seq)
	f.newest = max(f.newest, seq)
	f.mu.Unlock()
}

// done settles seq for good (acknowledged, or removed as failed).
func (f *inflight) done(seq uint64) {
	f.mu.Lock()
	delete(f.msgs, seq)
	delete(f.back, seq)
	f.mu.Unlock()
}

// handBack marks seq handed back to be delivered again.
func (f *inflight) handBack(seq uint64) {
	f.mu.Lock()
	delete(f.msgs, seq)
	f.back[seq] = true
	f.mu.Unlock()
}

// floor is the highest sequence at or below which every message this
// inbox was handed is settled for good: a consumer that vanished can be
// made anew after it without losing a message.
func (f *inflight) floor() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	low := f.newest + 1
	for seq := range f.msgs {
		low = min(low, seq)
	}
	for seq := range f.back {
		low = min(low, seq)
	}
	return low - 1
}

// latest is the highest sequence delivered so far.
func (f *inflight) latest() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.newest
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
// library's default heartbeat (15 s) stalls an inbox for 30 s when its
// pull met no consumer leader (a cluster node just went down, or the
// consumer was being created): measured on a three-node cluster under
// load. The heartbeat, not the expiry, bounds that stall (a missed one
// makes the client pull anew), so the expiry is the library's 30 s: an
// idle inbox renews its pull twice a minute, not six times (issue 34).
//
// Only a cluster can lose a pull while the client's connection lives (the
// node that holds it dies, the client stays on another): on a single hub
// the pull and the connection end together, and the client pulls again
// as soon as it is back; a consumer deleted ends the pull at once (409).
// So an inbox on a hub that is no cluster's node pulls for
// pullExpiryAlone and is confirmed every pullHeartbeatAlone, half of it
// (the most the client allows): an idle wrapper wakes twice a minute for
// its pull (a confirmation, then the pull's end and its renewal) instead
// of 32 (issue 34). A pull that hub drops without a word is noticed
// after a minute instead of 4 s, and a message that waits with no pull
// asking for it by the inbox's own checks (inboxlife.go).
const (
	pullExpiry         = 30 * time.Second
	pullHeartbeat      = 2 * time.Second
	pullExpiryAlone    = time.Minute
	pullHeartbeatAlone = pullExpiryAlone / 2
)

// pullTimesOf is how long an inbox's pull on a connection lasts and how
// often the hub confirms it: pullExpiry and pullHeartbeat when the server
// it reaches is a cluster's node or others are known to the client, else
// pullExpiryAlone and pullHeartbeatAlone.
func pullTimesOf(nc *nats.Conn) (expiry, heartbeat time.Duration) {
	if nc.ConnectedClusterName() != "" || len(nc.DiscoveredServers()) > 0 || len(nc.Servers()) > 1 {
		return pullExpiry, pullHeartbeat
	}
	return pullExpiryAlone, pullHeartbeatAlone
}

// InboxHold bounds the deliveries an inbox holds unsettled (its
// consumer's MaxAckPending): what the hub hands over before the agent has
// taken what came before. Two of the largest batches (MaxBatch): the next
// batch is in memory while one is typed, and no more, so a long stream
// costs the wrapper a bounded amount of memory (issue 34) and the rest
// waits on the hub, in order.
const InboxHold = 2 * MaxBatch

// HoldOf is how many deliveries an inbox handing over batches of n
// (InboxBatchesOf) holds unsettled: two batches, the one being typed and
// the next, and never more than InboxHold. What an agent cannot take soon
// stays on the hub, not in the wrapper's memory: a plain shell (batches of
// 64) holds 128 messages of a long stream, not 512 (issue 34).
func HoldOf(n int) int {
	return min(2*max(n, 1), InboxHold)
}

// pullBatch is how many messages one pull request asks the hub for: a
// burst comes in few round trips.
const pullBatch = 64

// Inbox receives the agent's messages, oldest first, and calls handle for
// each valid one, one at a time, until ctx is done; then it hands back
// (Nak) the deliveries not yet acknowledged and returns nil. The inbox is a
// durable JetStream consumer named after the agent: what arrives while no
// Inbox runs waits. Inbox never gives up while ctx lives: a consumer the
// hub refuses to open is tried again with backoff, and one that stops
// under it (deleted, its pulls ended) is rebuilt (logged at ERROR). Envelopes that fail validation (from a foreign client)
// are logged, removed and reported failed to their sender where possible;
// handle never sees them. handle may return before it settles a delivery
// (Ack, Nak or Fail from any goroutine later); up to InboxHold deliveries
// may be unsettled at once.
func (c *Client) Inbox(ctx context.Context, handle func(context.Context, *Delivery)) error {
	return c.consume(ctx, InboxHold, func(d *Delivery, _ uint64) {
		if d != nil {
			handle(ctx, d)
		}
	})
}

// consume runs the inbox (see Inbox), calling each for every message the
// hub hands over, in order, one at a time: with its valid delivery (nil for
// an envelope that was refused) and how many messages of the inbox the hub
// still held back when it sent this one. At most hold deliveries are
// unsettled at once (the consumer's MaxAckPending, updated on an existing
// consumer).
func (c *Client) consume(ctx context.Context, hold int, each func(d *Delivery, pending uint64)) error {
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
		MaxAckPending:  hold,
	}
	fl := newInflight()
	var floor uint64 // the consumer's latest known ack floor, to rebuild it from
	wait := rebuildFirst
	for {
		cons := c.openInbox(ctx, cfg, floor)
		if cons == nil { // ctx ended or the client closed
			fl.nakAll()
			return nil
		}
		began := time.Now()
		err := c.serveInbox(ctx, cons, fl, &floor, each)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || c.isClosed() {
			// It ended because the client closes (its connection drains
			// under a pull just started): no loss, nothing to rebuild.
			fl.nakAll()
			return nil
		}
		floor = max(floor, fl.floor())
		if time.Since(began) > rebuildLast {
			wait = rebuildFirst // it served a while: this is a new failure
		}
		c.log.Error("inbox stopped; rebuilding it", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-c.closed:
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, rebuildLast)
	}
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

package bus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The inbox's lifecycle: its durable consumer is opened (made, updated or
// made anew) so that no earlier session can leave it in a shape the next
// open refuses, and a live inbox checks on it, rebuilding it when it
// stops. Nothing here gives up while the inbox's context lives.
const (
	// rebuildFirst and rebuildLast bound the backoff between attempts to
	// open or rebuild an inbox.
	rebuildFirst = 250 * time.Millisecond
	rebuildLast  = 5 * time.Second
	// inboxCheckEvery is how often a live inbox asks the hub about its
	// consumer while messages wait or move: a consumer deleted under it
	// (by an operator, or lost by the hub) is noticed within this time
	// even when no pull said so.
	inboxCheckEvery = 2 * time.Second
	// inboxCheckIdle is how often it asks while its last look found
	// nothing waiting and nothing moved since: an idle agent's inbox
	// costs a round trip (and the decoding of the consumer's whole
	// record, a third of the round trip's CPU) every 30 s, not every 2 s
	// (issue 34). A deletion is told by the hub at once (the pull ends
	// with 409), and a pull lost with a cluster node by the missed pull
	// heartbeats; only a message that arrives and is still not delivered
	// waits for the next look, after which the checks come every
	// inboxCheckEvery again.
	inboxCheckIdle = 30 * time.Second
	// inboxAPIWait bounds one round of opening an inbox.
	inboxAPIWait = 5 * time.Second
	// stallChecks is how many checks in a row must find messages waiting
	// with no pull asking for them before the inbox is rebuilt.
	stallChecks = 3
)

// ErrInboxLost means a live inbox's consumer stopped delivering: it was
// deleted, or its pulls ended. The inbox rebuilds it by itself; the error
// is what the logs say.
var ErrInboxLost = errors.New("inbox consumer lost")

// openInbox makes the inbox's consumer ready (see ensureInbox), trying
// again with backoff, for as long as it takes, whatever the hub answers:
// an agent whose inbox failed to open would receive nothing for the rest
// of its session. A refusal is logged at ERROR (someone must look), a hub
// that does not answer at WARN (it is told elsewhere). floor is the last
// acknowledged stream sequence known of the inbox (0 when none is): a
// consumer gone since is made anew after it. It returns nil when ctx ends
// or the client is closed first.
func (c *Client) openInbox(ctx context.Context, cfg jetstream.ConsumerConfig, floor uint64) jetstream.Consumer {
	wait := rebuildFirst
	for {
		cons, err := c.ensureInbox(ctx, cfg, &floor)
		if err == nil {
			return cons
		}
		if ctx.Err() != nil || c.isClosed() {
			return nil
		}
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) {
			c.log.Error("inbox refused by the hub; trying again", "err", err, "in", wait)
		} else {
			c.log.Warn("inbox cannot open yet; trying again", "err", err, "in", wait)
		}
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

// isClosed reports whether the client is closed or closing: Close drains
// the connection first, which ends the inbox's pulls before the client is
// closed, and that is the end of the inbox, not a consumer lost.
func (c *Client) isClosed() bool {
	if c.closing.Load() {
		return true
	}
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// ensureInbox makes the durable consumer cfg describes usable, whatever
// an earlier session left:
//   - none: made with cfg (every message waiting in the inbox comes), or,
//     when *floor is known (it vanished under a live inbox), from the
//     message after it;
//   - one with deliveries not acknowledged (a session that crashed, was
//     killed, or had a hook hold a message): made anew from the first
//     unacknowledged message, so they come again in order, before newer
//     ones, instead of after AckWait behind them (what was typed already
//     is known to the wrapper's journal and not typed twice);
//   - else updated to cfg, keeping the deliver policy and start it was
//     made with: JetStream cannot change them, and they mean nothing once
//     it exists. An update refused all the same (a consumer of that name
//     in a shape ours cannot become, made by hand or another version) has
//     it made anew after its acknowledged messages.
//
// *floor is set to the consumer's acknowledged floor whenever it is read.
func (c *Client) ensureInbox(ctx context.Context, cfg jetstream.ConsumerConfig, floor *uint64) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, inboxAPIWait)
	defer cancel()
	old, err := c.js.Consumer(ctx, StreamName(c.opts.Workspace), cfg.Durable)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		if *floor > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, *floor+1
			c.log.Warn("inbox consumer is gone; making it anew", "from_seq", cfg.OptStartSeq)
		}
		return c.js.CreateConsumer(ctx, StreamName(c.opts.Workspace), cfg)
	}
	if err != nil {
		return nil, err
	}
	info := old.CachedInfo()
	*floor = max(*floor, info.AckFloor.Stream)
	if info.NumAckPending > 0 {
		c.log.Info("inbox resumes in order", "from_seq", info.AckFloor.Stream+1, "pending", info.NumAckPending)
		return c.remakeInbox(ctx, cfg, *floor)
	}
	cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = info.Config.DeliverPolicy, info.Config.OptStartSeq, info.Config.OptStartTime
	cons, err := c.js.UpdateConsumer(ctx, StreamName(c.opts.Workspace), cfg)
	var apiErr *jetstream.APIError
	if err == nil || !errors.As(err, &apiErr) || errors.Is(err, jetstream.ErrConsumerNotFound) {
		return cons, err // a not-found (deleted meanwhile) is made next round
	}
	c.log.Warn("inbox consumer cannot be updated; making it anew", "err", err, "from_seq", *floor+1)
	return c.remakeInbox(ctx, cfg, *floor)
}

// remakeInbox deletes the inbox's consumer and makes it again from the
// message after floor.
func (c *Client) remakeInbox(ctx context.Context, cfg jetstream.ConsumerConfig, floor uint64) (jetstream.Consumer, error) {
	if err := c.js.DeleteConsumer(ctx, StreamName(c.opts.Workspace), cfg.Durable); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("remake inbox: %w", err)
	}
	cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = jetstream.DeliverByStartSequencePolicy, floor+1, nil
	cons, err := c.js.CreateConsumer(ctx, StreamName(c.opts.Workspace), cfg)
	if err != nil {
		return nil, fmt.Errorf("remake inbox: %w", err)
	}
	return cons, nil
}

// serveInbox consumes cons, calling each for every message, until ctx
// ends or the client closes (then it hands back what was not settled and
// returns nil), or until the consumer is lost (deleted, its pulls ended):
// then it returns an error wrapping ErrInboxLost and the caller rebuilds
// it. *floor follows the consumer's acknowledged floor, checked every
// inboxCheckEvery.
func (c *Client) serveInbox(ctx context.Context, cons jetstream.Consumer, fl *inflight, floor *uint64, each func(*Delivery, uint64)) error {
	if info := cons.CachedInfo(); info != nil {
		*floor = max(*floor, info.AckFloor.Stream)
	}
	lost := make(chan error, 1)
	var handing atomic.Int64 // callbacks running: a slow handler is not a stall
	expiry, heartbeat := pullTimesOf(c.nc)
	cc, err := cons.Consume(func(m jetstream.Msg) {
		if ctx.Err() != nil {
			_ = m.Nak()
			return
		}
		handing.Add(1)
		defer handing.Add(-1)
		c.deliver(ctx, m, fl, each)
	}, jetstream.PullMaxMessages(pullBatch), jetstream.PullExpiry(expiry), jetstream.PullHeartbeat(heartbeat), jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if ctx.Err() != nil || c.isClosed() {
			return
		}
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			select {
			case lost <- err:
			default:
			}
			return
		}
		c.log.Warn("inbox", "err", err)
	}))
	if err != nil {
		return fmt.Errorf("%w: consume: %w", ErrInboxLost, err)
	}
	check := time.NewTimer(inboxCheckEvery)
	defer check.Stop()
	stalls, newest := 0, fl.latest()
	for {
		select {
		case <-ctx.Done():
			c.endInbox(cc, fl)
			return nil
		case <-c.closed:
			c.endInbox(cc, fl)
			return nil
		case err := <-lost:
			cc.Stop()
			return fmt.Errorf("%w: %w", ErrInboxLost, err)
		case <-cc.Closed():
			if ctx.Err() != nil || c.isClosed() {
				fl.nakAll()
				return nil
			}
			return fmt.Errorf("%w: its pulls ended", ErrInboxLost)
		case <-check.C:
			ictx, cancel := context.WithTimeout(ctx, inboxCheckEvery)
			info, err := cons.Info(ictx)
			cancel()
			quiet := false // nothing waits, nothing moved: look again later
			switch {
			case errors.Is(err, jetstream.ErrConsumerNotFound):
				cc.Stop()
				return fmt.Errorf("%w: the hub has no consumer %q", ErrInboxLost, cons.CachedInfo().Name)
			case err == nil:
				*floor = max(*floor, info.AckFloor.Stream)
				// Messages wait, none came since the last look, no pull
				// asks for them and no handler holds the callback up: the
				// client's pulls stopped without a word.
				moved := fl.latest() != newest
				newest = fl.latest()
				if info.NumPending > 0 && info.NumWaiting == 0 && !moved && handing.Load() == 0 &&
					info.NumAckPending < info.Config.MaxAckPending {
					stalls++
				} else {
					stalls = 0
				}
				quiet = info.NumPending == 0 && info.NumAckPending == 0 && !moved && handing.Load() == 0
				if stalls >= stallChecks {
					cc.Stop()
					return fmt.Errorf("%w: %d message(s) wait and no pull asks for them", ErrInboxLost, info.NumPending)
				}
			}
			if quiet {
				check.Reset(inboxCheckIdle)
			} else {
				check.Reset(inboxCheckEvery)
			}
		}
	}
}

// endInbox stops consuming and hands back (Nak) the deliveries not yet
// settled.
func (c *Client) endInbox(cc jetstream.ConsumeContext, fl *inflight) {
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
}

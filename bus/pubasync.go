package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// pubAckWait bounds how long one round of publishAll waits for the hub's
// acknowledgements before it publishes what is still unacknowledged again
// (with the same Nats-Msg-Id: the hub keeps one copy), as publish does.
const pubAckWait = 2 * time.Second

// pub is one message to store through JetStream.
type pub struct {
	subj  string
	data  []byte
	msgID string // the Nats-Msg-Id: a message published twice is kept once
}

// publishAll stores every message of ps through JetStream with all of them
// in flight at once (asynchronous publishes, acknowledgements collected
// afterwards), instead of one round trip each: the order on the hub is the
// order of ps unless a message had to be published again. A message the
// hub did not acknowledge for a reason that may pass (it is unreachable,
// no stream answered, the acknowledgement did not come within pubAckWait)
// is published again, with the same id, until ctx is done. It returns one
// error per message: nil when the hub stored it.
func (c *Client) publishAll(ctx context.Context, ps []pub) []error {
	errs := make([]error, len(ps))
	todo := make([]int, len(ps))
	for i := range todo {
		todo[i] = i
	}
	backoff := 50 * time.Millisecond
	for len(todo) > 0 {
		futs := make([]jetstream.PubAckFuture, len(todo))
		for k, i := range todo {
			msg := &nats.Msg{Subject: ps[i].subj, Data: ps[i].data, Header: nats.Header{}}
			msg.Header.Set(jetstream.MsgIDHeader, ps[i].msgID)
			futs[k], errs[i] = c.js.PublishMsgAsync(msg)
		}
		timeout := time.NewTimer(pubAckWait)
		expired := false
		var again []int
		for k, i := range todo {
			if futs[k] != nil {
				errs[i] = waitAck(ctx, futs[k], timeout.C, &expired)
			}
			if errs[i] != nil && retryable(errs[i]) && ctx.Err() == nil {
				again = append(again, i)
			}
		}
		timeout.Stop()
		for _, i := range todo {
			if errs[i] != nil && !retryable(errs[i]) {
				errs[i] = fmt.Errorf("publish %s: %w", ps[i].subj, hubFull(errs[i]))
			}
		}
		if len(again) == 0 || ctx.Err() != nil {
			for _, i := range again {
				errs[i] = fmt.Errorf("publish %s: %w (last error: %v)", ps[i].subj, ctx.Err(), errs[i])
			}
			break
		}
		c.log.Warn("publishes not acknowledged; retrying", "count", len(again), "err", errs[again[0]])
		select {
		case <-ctx.Done():
		case <-c.closed:
			for _, i := range again {
				errs[i] = fmt.Errorf("publish %s: %w", ps[i].subj, nats.ErrConnectionClosed)
			}
			return errs
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
		todo = again
	}
	return errs
}

// waitAck waits for one asynchronous publish's acknowledgement; once the
// round's timeout fired (expired), it only takes what has come already.
func waitAck(ctx context.Context, f jetstream.PubAckFuture, timeout <-chan time.Time, expired *bool) error {
	if *expired {
		select {
		case <-f.Ok():
			return nil
		case err := <-f.Err():
			return err
		default:
			return context.DeadlineExceeded
		}
	}
	select {
	case <-f.Ok():
		return nil
	case err := <-f.Err():
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout:
		*expired = true
		return waitAck(ctx, f, timeout, expired)
	}
}

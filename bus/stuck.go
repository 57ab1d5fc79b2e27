package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// stuck is what a wrapper says in its presence while a message waits too
// long to be typed into its agent.
type stuck struct {
	Since  time.Time `json:"since"`  // when the oldest waiting message arrived
	Reason string    `json:"reason"` // why it waits
}

// SetStuck records in the agent's presence that its oldest incoming
// message has waited since since to be typed, for reason, and pushes the
// presence at once when registered (`relay agents` then shows the agent
// stuck); a zero since clears it.
func (c *Client) SetStuck(ctx context.Context, since time.Time, reason string) error {
	if since.IsZero() {
		c.stuck.Store(nil)
	} else {
		c.stuck.Store(&stuck{Since: since.UTC(), Reason: reason})
	}
	c.mu.Lock()
	cl := c.claim
	c.mu.Unlock()
	if cl == nil {
		return nil
	}
	cl.mu.Lock()
	st := cl.state
	cl.mu.Unlock()
	return c.putPresence(ctx, cl, st)
}

// InboxHealth is what the hub knows of one agent's inbox (InboxOf).
type InboxHealth struct {
	Agent string `json:"agent"`
	// Consumer says the inbox's durable consumer exists; without it the
	// agent receives nothing until its wrapper makes it again.
	Consumer bool `json:"consumer"`
	// Pending counts the messages not yet handed to the wrapper,
	// AckPending those handed over and not yet acknowledged, Waiting the
	// pull requests the wrapper has outstanding (0 while messages are
	// pending means no one takes them).
	Pending    uint64 `json:"pending"`
	AckPending int    `json:"ack_pending"`
	Waiting    int    `json:"waiting"`
}

// Stalled reports whether messages wait in the inbox while no pull of a
// wrapper asks for them.
func (h InboxHealth) Stalled() bool { return h.Consumer && h.Pending > 0 && h.Waiting == 0 }

// InboxOf asks the hub about agent's inbox.
func (c *Client) InboxOf(ctx context.Context, agent string) (InboxHealth, error) {
	h := InboxHealth{Agent: agent}
	cons, err := c.js.Consumer(ctx, StreamName(c.opts.Workspace), agent)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("inbox of %s: %w", agent, err)
	}
	info := cons.CachedInfo()
	h.Consumer, h.Pending, h.AckPending, h.Waiting = true, info.NumPending, info.NumAckPending, info.NumWaiting
	return h, nil
}

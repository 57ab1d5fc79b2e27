package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnknownAgent means the recipient never registered in the workspace.
// Send returns it together with the stored envelope: the message waits in
// the recipient's inbox in case it joins, and the sender should be told.
var ErrUnknownAgent = errors.New("unknown agent")

// ErrNoRecipients means a broadcast found no other agent in the workspace;
// nothing was stored.
var ErrNoRecipients = errors.New("no other agents in the workspace")

// Message is what SendMessage sends: Send's recipient and body plus the
// optional threading fields of the envelope.
type Message struct {
	// ID is the message's id; empty means a new unique one. Give the same
	// id when sending again after an error, so that the hub keeps one copy.
	ID      string
	To      string // an agent's name, or Broadcast ("*")
	Body    string
	Thread  string
	ReplyTo string
	Hops    int
	Kind    Kind // empty means KindMessage
}

// Send sends body to the agent named to, or to every other agent of the
// workspace when to is "*" (one copy in each inbox). It returns once the
// hub has stored the message. When the error wraps ErrUnknownAgent the
// message was stored all the same and the returned envelope is valid.
func (c *Client) Send(ctx context.Context, to, body string) (Envelope, error) {
	return c.SendMessage(ctx, Message{To: to, Body: body})
}

// SendMessage is Send with the envelope's optional fields.
func (c *Client) SendMessage(ctx context.Context, m Message) (Envelope, error) {
	env, data, err := c.envelope(m)
	if err != nil {
		return env, err
	}
	if m.To == Broadcast {
		to, err := c.others(ctx)
		if err != nil {
			return env, fmt.Errorf("send to *: %w", err)
		}
		if len(to) == 0 {
			return env, fmt.Errorf("send to *: %w %q", ErrNoRecipients, c.opts.Workspace)
		}
		for _, r := range to {
			if err := c.publish(ctx, c.inboxSubject(r), data, c.dedupID(env.ID, r)); err != nil {
				return env, fmt.Errorf("send to * (copy for %s): %w", r, err)
			}
		}
		return env, nil
	}
	if err := c.publish(ctx, c.inboxSubject(m.To), data, c.dedupID(env.ID)); err != nil {
		return env, fmt.Errorf("send to %s: %w", m.To, err)
	}
	// Asked once the message is stored: a hub that is away holds up the
	// publish, which waits for it, not the question.
	if !c.known(ctx, m.To) {
		return env, c.unknown(ctx, m.To)
	}
	return env, nil
}

// envelope makes the envelope of m (a new id when it has none), checks it
// and encodes it.
func (c *Client) envelope(m Message) (Envelope, []byte, error) {
	if m.ID == "" {
		m.ID = NewID()
	}
	env := Envelope{
		ID: m.ID, Workspace: c.opts.Workspace, From: c.opts.Name, To: m.To, Body: m.Body,
		Thread: m.Thread, ReplyTo: m.ReplyTo, Hops: m.Hops, Created: time.Now().UTC(), Kind: m.Kind,
		Human: c.opts.Human,
	}
	if env.Kind == "" {
		env.Kind = KindMessage
	}
	if c.opts.Name == "" {
		return env, nil, fmt.Errorf("send: %w: the client has no agent name", ErrNotRegistered)
	}
	if err := env.Validate(); err != nil {
		return env, nil, fmt.Errorf("send to %s: %w", m.To, err)
	}
	data, err := json.Marshal(env)
	if err != nil {
		return env, nil, fmt.Errorf("send to %s: %w", m.To, err)
	}
	return env, data, nil
}

// known reports whether the agent named to ever registered.
func (c *Client) known(ctx context.Context, to string) bool {
	ok, _ := c.IsAgent(ctx, to)
	return ok
}

// unknown is the error for a message stored for an agent never registered.
func (c *Client) unknown(ctx context.Context, to string) error {
	return fmt.Errorf("%w: %q has never joined workspace %q%s; the message waits in its inbox in case it does",
		ErrUnknownAgent, to, c.opts.Workspace, c.suggest(ctx, to))
}

// others lists the other agents ever registered in the workspace, asking
// the hub (a broadcast must not miss one that joined a moment ago).
func (c *Client) others(ctx context.Context) ([]string, error) {
	lister, err := c.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	// Every name seen before counts: right after a cluster node failed, a
	// listing may come back empty (measured on a three-node cluster under
	// load), and agents are never removed from the bucket.
	for k := range lister.Keys() {
		c.names.add(k)
	}
	return c.names.others(c.opts.Name), nil
}

// suggest names a registered agent that differs from name only in case.
func (c *Client) suggest(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, _ = c.others(ctx) // the names, listed once more
	for _, n := range c.names.others("") {
		if strings.EqualFold(n, name) {
			return fmt.Sprintf(" (did you mean %q?)", n)
		}
	}
	return ""
}

// publish stores data on subj through JetStream, retrying with the same
// Nats-Msg-Id (so at most one copy is kept) while the hub is unreachable,
// until ctx is done.
func (c *Client) publish(ctx context.Context, subj string, data []byte, msgID string) error {
	// A refused publish is never acknowledged: without the watch it would
	// be retried until ctx ends, as if the hub were slow.
	ctx, stop := c.watchPublish(ctx, subj)
	defer stop()
	backoff := 50 * time.Millisecond
	for {
		msg := &nats.Msg{Subject: subj, Data: data, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, msgID)
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.js.PublishMsg(actx, msg)
		cancel()
		if err == nil {
			return nil
		}
		if why := refused(ctx); why != nil {
			return fmt.Errorf("publish %s: %w", subj, why)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("publish %s: %w (last error: %v)", subj, ctx.Err(), err)
		}
		if !retryable(err) {
			return fmt.Errorf("publish %s: %w", subj, hubFull(err))
		}
		c.log.Warn("publish not acknowledged; retrying", "subject", subj, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("publish %s: %w (last error: %v)", subj, ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func retryable(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// inboxSubject is where this client sends to agent to: with its own name
// as the sender token, or, for a human, without one.
func (c *Client) inboxSubject(to string) string {
	if c.opts.Human {
		return InboxSubject(c.opts.Workspace, to)
	}
	return SenderInboxSubject(c.opts.Workspace, to, c.opts.Name)
}

package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Status is where a message is on its way to an agent.
type Status string

// Delivery statuses, in the order a message normally goes through them.
const (
	StatusQueued    Status = "queued"    // stored in the recipient's inbox (implicit: no receipt is sent)
	StatusDelivered Status = "delivered" // typed into the agent and submitted, or handed over by a hook
	StatusSeen      Status = "seen"      // the agent was given it: the CLI's own record of the prompt, or a shell read its line
	StatusAnswered  Status = "answered"  // the recipient sent its sender a message after it saw this one
	// StatusConfirmed is what relays before receipts had the stage seen
	// said for it; the log reads it as StatusSeen.
	StatusConfirmed Status = "confirmed"
	StatusFailed    Status = "failed" // given up; Reason says why
	StatusHeld      Status = "held"   // held back by loop damping; Reason says why
	StatusStuck     Status = "stuck"  // waited longer than the recipient's stuck_after to be typed; Reason says why
)

// Receipt reports the status of one message at one recipient. Receipts are
// stored with the messages (subject relay.<workspace>.receipt.<id>) and
// seen live by the sender.
type Receipt struct {
	ID        string    `json:"id"` // the message's id
	Workspace string    `json:"workspace"`
	From      string    `json:"from"`  // who sent the message
	Agent     string    `json:"agent"` // who reports: the recipient
	Status    Status    `json:"status"`
	Reason    string    `json:"reason,omitempty"`
	Time      time.Time `json:"time"`
	// Message is set by Hold: the held message itself, which no inbox
	// holds, so that the log can show it.
	Message *Envelope `json:"message,omitempty"`
	// Answer is set with StatusAnswered: the recipient's message to the
	// sender that answered this one.
	Answer *Envelope `json:"answer,omitempty"`
}

// Hold records in the log that this client's agent wrote m but relay held
// it back (loop damping) with reason. It reaches no inbox: the log shows it
// with the status held, and the sender is told by its own wrapper.
func (c *Client) Hold(ctx context.Context, m Message, reason string) (Envelope, error) {
	if m.ID == "" {
		m.ID = NewID()
	}
	env := Envelope{
		ID: m.ID, Workspace: c.opts.Workspace, From: c.opts.Name, To: m.To, Body: m.Body,
		Thread: m.Thread, ReplyTo: m.ReplyTo, Hops: m.Hops, Created: time.Now().UTC(), Kind: KindMessage,
	}
	if err := env.Validate(); err != nil {
		return env, fmt.Errorf("hold message to %s: %w", m.To, err)
	}
	r := Receipt{ID: env.ID, Workspace: c.opts.Workspace, From: c.opts.Name, Agent: m.To, Status: StatusHeld,
		Reason: reason, Time: env.Created, Message: &env}
	data, err := json.Marshal(r)
	if err != nil {
		return env, fmt.Errorf("hold message to %s: %w", m.To, err)
	}
	if err := c.publish(ctx, ReceiptSubject(c.opts.Workspace, env.ID), data, c.dedupID(env.ID, "held")); err != nil {
		return env, fmt.Errorf("hold message to %s: %w", m.To, err)
	}
	return env, nil
}

// Receipt records status (with an optional reason) for the message env as
// this client's agent, the recipient.
func (c *Client) Receipt(ctx context.Context, env Envelope, st Status, reason string) error {
	p, err := c.receiptPub(env, st, reason)
	if err != nil {
		return err
	}
	if err := c.publish(ctx, p.subj, p.data, p.msgID); err != nil {
		return fmt.Errorf("receipt %s for %s: %w", st, env.ID, err)
	}
	return nil
}

// Receipts calls fn with the receipts for messages this client's agent
// sent, as they arrive, until ctx is done. Receipts that arrive while the
// connection is down are in the log but not passed to fn.
func (c *Client) Receipts(ctx context.Context, fn func(Receipt)) error {
	ch := make(chan *nats.Msg, 256)
	sub, err := c.nc.ChanSubscribe(ReceiptSubject(c.opts.Workspace, "*"), ch)
	if err != nil {
		return fmt.Errorf("subscribe to receipts: %w", err)
	}
	defer sub.Unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.closed:
			return nil
		case m := <-ch:
			var r Receipt
			if err := json.Unmarshal(m.Data, &r); err != nil {
				c.log.Warn("bad receipt", "subject", m.Subject, "err", err)
				continue
			}
			if r.From == c.opts.Name {
				fn(r)
			}
		}
	}
}

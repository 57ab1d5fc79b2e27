package bus

import (
	"context"
	"fmt"
)

// Sent is the outcome of one message of SendAll.
type Sent struct {
	// Envelope is the message as stored (valid whenever the message was
	// well formed, even with an error).
	Envelope Envelope
	// Err is nil when the hub stored the message; it wraps ErrUnknownAgent
	// when it was stored all the same for a recipient never registered,
	// as Send does.
	Err error
}

// SendAll sends every message of ms as Send would, with all of them in
// flight at once: the publishes go out without waiting for each other and
// the hub's acknowledgements are collected afterwards, so that a burst
// costs about one round trip instead of one per message. Messages stay in
// order on the hub (a message the hub did not acknowledge is published
// again with the same id, until ctx is done: nothing is stored twice). It
// returns when every message is stored or has failed, one Sent per message
// in the order of ms.
func (c *Client) SendAll(ctx context.Context, ms []Message) []Sent {
	out := make([]Sent, len(ms))
	var ps []pub
	var owner []int // index in ms of each publish
	var others []string
	known := map[string]bool{}
	for i, m := range ms {
		env, data, err := c.envelope(m)
		out[i] = Sent{Envelope: env, Err: err}
		if err != nil {
			continue
		}
		if m.To != Broadcast {
			ps, owner = append(ps, pub{c.inboxSubject(m.To), data, c.dedupID(env.ID)}), append(owner, i)
			continue
		}
		if others == nil {
			if others, err = c.others(ctx); err != nil {
				out[i].Err, others = fmt.Errorf("send to *: %w", err), nil
				continue
			}
		}
		if len(others) == 0 {
			out[i].Err = fmt.Errorf("send to *: %w %q", ErrNoRecipients, c.opts.Workspace)
			continue
		}
		for _, r := range others {
			ps, owner = append(ps, pub{c.inboxSubject(r), data, c.dedupID(env.ID, r)}), append(owner, i)
		}
	}
	for k, err := range c.publishAll(ctx, ps) {
		i := owner[k]
		if err != nil && out[i].Err == nil {
			out[i].Err = fmt.Errorf("send to %s: %w", ms[i].To, err)
		}
	}
	for i, m := range ms {
		if out[i].Err != nil || m.To == Broadcast {
			continue
		}
		if _, ok := known[m.To]; !ok { // once stored (see SendMessage)
			known[m.To] = c.known(ctx, m.To)
		}
		if !known[m.To] {
			out[i].Err = c.unknown(ctx, m.To)
		}
	}
	return out
}

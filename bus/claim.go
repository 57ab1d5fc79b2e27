package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A name's claim rests on two things: the agent's key in the presence
// bucket (a create, then compare-and-set heartbeats) and the live wrapper
// itself, which answers on ClaimSubject for as long as its connection
// lives. Before it claims a name, a client asks that subject: a live
// holder answers, and the name is refused whatever the bucket says, so a
// live name is never taken twice even if presence storage was wiped. A
// holder that died has no subscription left (its connection closed with
// it): the hub answers at once that no one listens.

// ClaimSubject is where the live holder of agent's name answers:
// relay.<workspace>.claim.<agent>. Agents' own credentials may neither
// publish nor subscribe there.
func ClaimSubject(workspace, agent string) string {
	return "relay." + workspace + ".claim." + agent
}

// holder is what a live holder answers on ClaimSubject.
type holder struct {
	Session string `json:"session"`
	Host    string `json:"host,omitempty"`
	PID     int    `json:"pid,omitempty"`
}

// askHolder asks whether a live wrapper holds the name. It returns
// ErrNameTaken when one answers; nil when none listens or the one that
// listens does not answer in time (stopped: the heartbeats decide).
func (c *Client) askHolder(ctx context.Context) error {
	wait := min(c.opts.Heartbeat, time.Second)
	if d, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(d))
	}
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, ClaimSubject(c.opts.Workspace, c.opts.Name), nil)
	if err != nil {
		if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			c.log.Warn("ask the holder of the name", "err", err)
		}
		return nil
	}
	var h holder
	_ = json.Unmarshal(m.Data, &h)
	return fmt.Errorf("%w: a live agent holds it and answers for it (pid %d on %s); choose another name", ErrNameTaken, h.PID, h.Host)
}

// answerClaims makes this client answer on ClaimSubject for cl until the
// claim stops or is lost (claim.stop, heartbeat). It does not wait for the
// hub to confirm the subscription: the hub reads it before anything this
// client writes after it, and the key written just before is what refuses
// a second claim meanwhile.
func (c *Client) answerClaims(cl *claim, host string) error {
	data, _ := json.Marshal(holder{Session: cl.session, Host: host, PID: os.Getpid()})
	sub, err := c.nc.Subscribe(ClaimSubject(c.opts.Workspace, c.opts.Name), func(m *nats.Msg) {
		_ = m.Respond(data)
	})
	if err != nil {
		return fmt.Errorf("answer for the name %q: %w", c.opts.Name, err)
	}
	cl.answer = sub
	return nil
}

// provablyDead reports whether the record's wrapper ran on this machine
// (same host name and process namespace) and its process is gone.
func (r record) provablyDead(host string) bool {
	if r.PID <= 0 || r.Host == "" || r.Host != host || r.PIDNS != pidNamespace() || r.PID == os.Getpid() {
		return false
	}
	return processGone(r.PID)
}

// recreate writes the claim's key again after it vanished (deleted or
// purged by an operator, storage lost): a create, so that it never
// overwrites another agent's claim made in between. cl.mu is held.
func (c *Client) recreate(ctx context.Context, cl *claim, val []byte) error {
	rev, err := c.kv.Create(ctx, c.opts.Name, val)
	if err == nil {
		cl.rev = rev
		c.log.Warn("presence key was gone; written again", "name", c.opts.Name)
		return nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("write presence of %q again: %w", c.opts.Name, err)
	}
	e, gerr := c.kv.Get(ctx, c.opts.Name)
	if gerr != nil {
		return fmt.Errorf("write presence of %q again: %w", c.opts.Name, gerr)
	}
	return c.adopt(cl, e)
}

// adopt takes e, the current entry of the name, as this claim's revision
// when it is this claim's; else the claim is lost. cl.mu is held.
func (c *Client) adopt(cl *claim, e jetstream.KeyValueEntry) error {
	var r record
	_ = json.Unmarshal(e.Value(), &r)
	if r.Session == cl.session {
		cl.rev = e.Revision()
		return nil
	}
	cl.lost = fmt.Errorf("%w: %q was claimed by another agent (pid %d on %s) while this one was unreachable",
		ErrNameTaken, c.opts.Name, r.PID, r.Host)
	return cl.lost
}

// guardPresence makes the presence bucket's stream refuse rollups and
// purges: a rollup on any key (KV-Operation PURGE with Nats-Rollup: all,
// which a credential allowed to write its own key could send) would wipe
// every agent's key. KV puts, creates, updates and reads need neither.
// Only a client with the administrator's rights can change it; an agent's
// own credential (it has an inbox prefix) does not try. b is what the
// bucket's stream was found to be (zero for one made just now): a bucket
// guarded already, the usual case, costs no request.
func (c *Client) guardPresence(ctx context.Context, b streamBrief) {
	if c.opts.InboxPrefix != "" {
		return
	}
	if !b.Config.AllowRollup && b.Config.DenyPurge && b.Config.DenyDelete {
		return
	}
	// A user the server denies answers nothing: do not wait long for it.
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	st, err := c.js.Stream(ctx, "KV_"+PresenceBucket(c.opts.Workspace))
	if err != nil {
		c.log.Warn("guard the presence bucket", "err", err)
		return
	}
	cfg := st.CachedInfo().Config
	if !cfg.AllowRollup && cfg.DenyPurge && cfg.DenyDelete {
		return
	}
	cfg.AllowRollup, cfg.DenyPurge, cfg.DenyDelete = false, true, true
	if _, err := c.js.UpdateStream(ctx, cfg); err != nil {
		c.log.Warn("guard the presence bucket: refuse rollups and purges", "stream", cfg.Name, "err", err)
	}
}

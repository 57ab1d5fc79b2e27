package relay

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/patterns"
)

// hopMemory is how long a message from a peer counts as the cause of the
// next message to that peer (for the hop limit).
const hopMemory = 10 * time.Minute

// maxOutbox bounds the messages kept while the hub is unreachable.
const maxOutbox = 1000

// pendingSend is a message waiting for the hub.
type pendingSend struct {
	msg   bus.Message
	since time.Time
}

// registry builds the handler chains: the built-ins first, then the user's
// handlers in registration order.
func (s *session) registry() *patterns.Registry {
	reg := patterns.NewRegistry()
	_ = reg.Handle(patterns.NSRelay, s.handleRelay)
	_ = reg.Handle(patterns.NSBroadcast, s.handleRelay)
	_ = reg.Handle(patterns.NSMemory, s.handleMemory)
	for _, p := range s.r.userPatterns() {
		h := p.h
		_ = reg.Handle(p.ns, func(ctx context.Context, c patterns.Command) (patterns.Result, error) {
			res, err := h(ctx, s.match(c))
			return patterns.Result{Inject: res.Inject, Stop: res.Stop}, err
		})
	}
	return reg
}

// handleCommands runs the handlers of each command the agent wrote, one at
// a time, in order, and types back what they return.
func (s *session) handleCommands(ctx context.Context) {
	for {
		c, ok := s.cmds.get(ctx)
		if !ok {
			return
		}
		s.log.Info("command", "ns", c.NS, "target", c.Target, "bytes", len(c.Body))
		results, err := s.reg.Dispatch(ctx, c)
		for _, r := range results {
			if r.Inject != "" {
				s.notice(r.Inject)
			}
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("handler failed", "ns", c.NS, "err", err)
			s.notice(fmt.Sprintf("@%s:%s failed: %v", c.NS, c.Target, err))
		}
	}
}

// handleRelay sends @relay:NAME and @broadcast: messages.
func (s *session) handleRelay(ctx context.Context, c patterns.Command) (patterns.Result, error) {
	to := c.Target
	if c.NS == patterns.NSBroadcast || to == "" {
		to = bus.Broadcast
	}
	if strings.EqualFold(to, s.name) {
		return patterns.Result{Inject: fmt.Sprintf("Not sent: @relay:%s is you.", to)}, nil
	}
	hops := 0
	s.mu.Lock()
	if r, ok := s.lastFrom[strings.ToLower(to)]; ok && time.Since(r.at) < hopMemory {
		hops = r.hops + 1
	}
	s.mu.Unlock()
	if ok, why := s.damper.Allow(time.Now(), s.name, to, hops); !ok {
		s.log.Warn("message held", "to", to, "why", why)
		if cl := s.client.Load(); cl != nil {
			// Shown in relay log with the status held, in no inbox.
			if _, err := cl.Hold(ctx, bus.Message{To: to, Body: c.Body, Hops: hops}, why); err != nil {
				s.log.Warn("record held message", "err", err)
			}
		}
		return patterns.Result{Inject: fmt.Sprintf("Not sent to %s (%s). Wait, or ask the human.", to, why)}, nil
	}
	msg := bus.Message{To: to, Body: c.Body, Hops: hops}
	if r, ok := s.lastFrom[strings.ToLower(to)]; ok && hops > 0 {
		msg.ReplyTo = r.id
	}
	return patterns.Result{Inject: s.send(ctx, msg)}, nil
}

// send hands msg to the outbox, which sends it in the background, in
// order, and retries while the hub is away; before the first connection it
// waits in the session's own list. It returns a notice for the agent, if
// one is due now; Send's verdict comes later through sent.
func (s *session) send(ctx context.Context, msg bus.Message) string {
	if s.alone() {
		return "Not sent: this agent runs without a hub (--hub none)."
	}
	s.mu.Lock()
	ob := s.outbox
	s.mu.Unlock()
	if ob == nil {
		return s.keep(msg)
	}
	if _, err := ob.Post(msg); err != nil {
		return fmt.Sprintf("Not sent to %s: %v.", msg.To, err)
	}
	return ""
}

// sent receives the hub's verdict on a message the agent sent.
func (s *session) sent(env bus.Envelope, err error) {
	ctx := context.Background()
	switch {
	case err == nil:
		s.fire(ctx, EventInfo{Event: MessageSent, ID: env.ID, From: s.name, To: env.To, Body: env.Body, Thread: env.Thread})
	case errors.Is(err, bus.ErrUnknownAgent):
		s.log.Info("sent to an unknown agent", "to", env.To, "id", env.ID)
		s.notice(fmt.Sprintf("No agent named %s has joined workspace %s yet; your message (id %s) waits in case it does. %s",
			env.To, s.o.Workspace, env.ID, trimSentinel(err)))
	case errors.Is(err, bus.ErrNoRecipients):
		s.notice("Not sent: no other agent is in the workspace.")
	case errors.Is(err, bus.ErrBodyTooLarge):
		s.notice(fmt.Sprintf("Not sent: the message is larger than %d bytes.", bus.MaxBody))
	default:
		s.notice(fmt.Sprintf("Not sent to %s: %v", env.To, err))
	}
}

func trimSentinel(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ";"); i >= 0 {
		return strings.TrimSpace(msg[i+1:])
	}
	return ""
}

// keep holds msg until the session first reaches the hub.
func (s *session) keep(msg bus.Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.early) >= maxOutbox {
		return fmt.Sprintf("Not sent to %s: the hub is unreachable and %d messages already wait.", msg.To, maxOutbox)
	}
	s.early = append(s.early, pendingSend{msg, time.Now()})
	if len(s.early) == 1 {
		return fmt.Sprintf("The hub is unreachable; your message to %s waits and goes out when it is back.", msg.To)
	}
	return ""
}

// startOutbox opens the bus outbox once connected and moves into it what
// waited for the hub, in order.
func (s *session) startOutbox(c *bus.Client) {
	ob := c.NewOutbox(bus.OutboxOptions{Size: maxOutbox, OnSent: s.sent})
	s.mu.Lock()
	early := s.early
	s.early = nil
	s.outbox = ob
	s.mu.Unlock()
	for _, p := range early {
		if _, err := ob.Post(p.msg); err != nil {
			s.notice(fmt.Sprintf("Not sent to %s: %v.", p.msg.To, err))
		}
	}
}

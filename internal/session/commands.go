package session

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/memory"
	"github.com/relayhq/relay/patterns"
)

// hopMemory is how long a message from a peer counts as the cause of the
// next message to that peer (for the hop limit).
const hopMemory = 10 * time.Minute

// registry builds the handler chains: the built-ins first, then the user's
// handlers in registration order.
func (s *Session) registry() *patterns.Registry {
	reg := patterns.NewRegistry()
	_ = reg.Handle(patterns.NSRelay, s.handleRelay)
	_ = reg.Handle(patterns.NSBroadcast, s.handleRelay)
	_ = reg.Handle(patterns.NSMemory, s.handleMemory)
	for _, p := range s.cfg.Patterns {
		h := p.Handle
		_ = reg.Handle(p.Namespace, func(ctx context.Context, c patterns.Command) (res patterns.Result, err error) {
			defer func() {
				if p := recover(); p != nil {
					s.log.Error("handler panicked", "ns", c.NS, "panic", p, "stack", string(debug.Stack()))
					err = fmt.Errorf("the handler panicked: %v", p)
				}
			}()
			r, err := h(ctx, s.match(c))
			return patterns.Result{Inject: r.Inject, Stop: r.Stop}, err
		})
	}
	return reg
}

func (s *Session) match(c patterns.Command) Match {
	return Match{Namespace: c.NS, Target: c.Target, Body: c.Body, Agent: s.name(), SessionID: s.sid, Workspace: s.cfg.Workspace}
}

// putCommand takes a command the agent wrote, from whichever source saw it.
func (s *Session) putCommand(c patterns.Command) { s.cmds.put(c) }

// screenCommand takes a command the screen saw: the exact source, when
// there is one, decides whether the screen is its source.
func (s *Session) screenCommand(c patterns.Command) {
	if s.src != nil && s.src.Screen(c) {
		return // the exact text gives the commands: the screen is only a copy
	}
	s.cmds.put(c)
}

// exactTexts extracts the commands of exact assistant texts, in order, and
// fires Output for their lines.
func (s *Session) exactTexts(ctx context.Context, texts []string) {
	for _, text := range texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		for _, c := range patterns.ExtractText(text, patterns.Options{Namespaces: s.reg.Namespaces(), Mode: patterns.Markdown}) {
			s.cmds.put(c)
		}
		if s.hasHandlers(Output) {
			lines := strings.Split(text, "\n")
			s.jobs.post(func(ctx context.Context) { s.outputLines(ctx, lines) })
		}
	}
}

// handleCommands runs the handlers of each command the agent wrote, one at
// a time, in order, and types back what they return.
func (s *Session) handleCommands(ctx context.Context) {
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
func (s *Session) handleRelay(ctx context.Context, c patterns.Command) (patterns.Result, error) {
	to := c.Target
	if c.NS == patterns.NSBroadcast || to == "" {
		to = bus.Broadcast
	}
	notice, _ := s.relayOut(ctx, bus.Message{To: to, Body: c.Body})
	return patterns.Result{Inject: notice}, nil
}

// relayOut sends what the agent sends (its @relay: lines and its own relay
// send) past the loop damping: msg.To and msg.Body are set, msg.ID may be.
// It returns a notice for the agent, if one is due now, and whether the
// message went to the outbox.
func (s *Session) relayOut(ctx context.Context, msg bus.Message) (string, bool) {
	to := msg.To
	var name string
	var last received
	var known bool
	s.read(func(st *state) {
		name = st.name
		last, known = st.lastFrom[strings.ToLower(to)]
	})
	if strings.EqualFold(to, name) {
		return fmt.Sprintf("Not sent: @relay:%s is you.", to), false
	}
	hops := 0
	if known && time.Since(last.at) < hopMemory {
		hops = last.hops + 1
	}
	if v := s.damper.Check(time.Now(), name, to, hops); !v.OK {
		s.log.Warn("message held", "to", to, "why", v.Why, "quiet", v.Quiet)
		if v.Quiet {
			// Held again within the window: counted, not reported again,
			// so that a notice is never the cause of another notice.
			return "", false
		}
		if cl := s.client.Load(); cl != nil {
			// Shown in relay log with the status held, in no inbox.
			if _, err := cl.Hold(ctx, bus.Message{ID: msg.ID, To: to, Body: msg.Body, Hops: hops}, v.Why); err != nil {
				s.log.Warn("record held message", "err", err)
			}
		}
		return fmt.Sprintf("Not sent to %s (%s). Wait, or ask the human.", to, v.Why), false
	}
	msg.Hops = hops
	if known && hops > 0 {
		msg.ReplyTo = last.id
	}
	notice := s.send(msg)
	return notice, !strings.HasPrefix(notice, "Not sent")
}

// handleMemory answers @memory: commands through the hub's memory service
// and types the reply (or a short notice of what went wrong) back in.
func (s *Session) handleMemory(ctx context.Context, c patterns.Command) (patterns.Result, error) {
	cl := s.client.Load()
	if cl == nil {
		return patterns.Result{Inject: "@memory is unavailable: the hub is unreachable."}, nil
	}
	api := memory.NewClient(cl.Conn(), memory.DefaultSubjectPrefix)
	reply, err := memory.Handle(ctx, api, s.name(), s.cfg.Workspace, c.Target, c.Body)
	if err != nil {
		s.log.Warn("memory", "verb", c.Target, "err", err)
	}
	return patterns.Result{Inject: reply}, nil
}

package session

import (
	"context"
	"errors"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hooks"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/patterns"
)

// hopMemory is how long a message from a peer counts as the cause of the
// next message to that peer (for the hop limit).
const hopMemory = 10 * time.Minute

// registry builds the handler chains: for each built-in namespace relay's
// own handler, or in its place the patterns that override it; then the
// user's handlers in registration order. Every user handler's Block is a
// refusal told to the agent (and ends the chain), and a stop with a reason
// says it; panics are recovered by Dispatch and told by handleCommands.
func (s *Session) registry() *patterns.Registry {
	reg := patterns.NewRegistry()
	overridden := map[string]bool{}
	for _, p := range s.cfg.Patterns {
		if p.Override {
			overridden[strings.ToLower(p.Namespace)] = true
		}
	}
	builtins := []struct {
		ns string
		h  patterns.Handler
	}{{patterns.NSRelay, s.handleRelay}, {patterns.NSBroadcast, s.handleRelay}, {patterns.NSMemory, s.handleMemory}}
	for _, b := range builtins {
		if overridden[b.ns] {
			s.log.Info("built-in namespace overridden", "ns", b.ns)
			continue
		}
		_ = reg.Handle(b.ns, b.h)
	}
	// Overriding handlers take the built-in's place at the front of the
	// chain; the others follow in registration order.
	for _, first := range []bool{true, false} {
		for _, p := range s.cfg.Patterns {
			if p.Override != first {
				continue
			}
			h := p.Handle
			if err := reg.Handle(p.Namespace, func(ctx context.Context, c patterns.Command) (patterns.Result, error) {
				r, err := h(ctx, s.match(c))
				if err != nil {
					return patterns.Result{}, err
				}
				return userResult(c, r), nil
			}); err != nil {
				s.log.Warn("pattern not registered", "ns", p.Namespace, "err", err)
			}
		}
	}
	return reg
}

// userResult turns a user handler's Result into the registry's: a Block
// is refused in one sentence with its reason and stops the chain; a Stop
// with a reason (Claude Code's stopReason) shows the reason.
func userResult(c patterns.Command, r Result) patterns.Result {
	out := patterns.Result{Inject: r.Inject, Stop: r.Stop, Own: !r.Neutralize}
	reason := strings.TrimSpace(r.Reason)
	switch {
	case r.Block:
		out.Stop = true
		if reason == "" {
			reason = "no reason given"
		}
		out.Inject = fmt.Sprintf("The %s command was refused: %s", commandName(c), sentence(reason))
	case r.Stop && reason != "":
		out.Inject = joinLines(out.Inject, fmt.Sprintf("The %s command stopped: %s", commandName(c), sentence(reason)))
	}
	return out
}

// commandName names a command as the agent wrote it: @deploy:staging.
func commandName(c patterns.Command) string {
	if c.Target == "" {
		return "@" + c.NS + ":"
	}
	return "@" + c.NS + ":" + c.Target
}

// sentence ends s with a full stop unless it already ends a sentence.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// failureNotice is what the agent is told of one failed handler: one plain
// sentence naming the command and what went wrong, without the chain of
// prefixes the error carries for the log.
func failureNotice(err error) string {
	var he *patterns.HandlerError
	if !errors.As(err, &he) {
		return sentence("A command failed: " + err.Error())
	}
	who := "The " + commandName(patterns.Command{NS: he.NS, Target: he.Target}) + " handler"
	if he.Of > 1 {
		who = fmt.Sprintf("Handler %d of %d for %s", he.Index, he.Of, commandName(patterns.Command{NS: he.NS, Target: he.Target}))
	}
	var pe *patterns.PanicError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s crashed (%v); relay goes on.", who, pe.Value)
	}
	var ee *hooks.ExitError
	if errors.As(err, &ee) {
		msg := fmt.Sprintf("%s failed with exit status %d", who, ee.Code)
		if line := firstLine(ee.Stderr); line != "" {
			msg += ": " + line
		}
		return sentence(msg)
	}
	return sentence(fmt.Sprintf("%s failed: %v", who, he.Err))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func (s *Session) match(c patterns.Command) Match {
	lines, msgs := s.events.recent.snapshot()
	return Match{Namespace: c.NS, Target: c.Target, Body: c.Body, Agent: s.name(), SessionID: s.spec.sid, Workspace: s.cfg.Workspace,
		RecentOutput: lines, RecentMessages: msgs}
}

// putCommand takes a command the agent wrote, from whichever source saw it.
func (s *Session) putCommand(c patterns.Command) {
	if !s.cmds.queue.Put(c) {
		// After the agent exited and its last commands were handled (a
		// late exact text): said in the log, not silently queued.
		s.log.Warn("command came after the session ended; not handled", "ns", c.NS, "target", c.Target)
	}
}

// screenCommand takes a command the screen saw: the exact source, when
// there is one, decides whether the screen is its source.
func (s *Session) screenCommand(c patterns.Command) {
	if s.spec.src != nil && s.spec.src.Screen(c) {
		return // the exact text gives the commands: the screen is only a copy
	}
	s.putCommand(c)
}

// exactTexts extracts the commands of exact assistant texts, in order, and
// fires Output for their lines.
func (s *Session) exactTexts(ctx context.Context, texts []string) {
	for _, text := range texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		// Recorded first: a handler's RecentOutput holds the text that
		// holds its command.
		s.events.recent.addLines(strings.Split(text, "\n"))
		for _, c := range patterns.ExtractText(text, patterns.Options{Namespaces: s.spec.reg.Namespaces(), Mode: patterns.Markdown}) {
			s.putCommand(c)
		}
		if s.hasHandlers(Output) {
			lines := strings.Split(text, "\n")
			s.events.jobs.post(func(ctx context.Context) { s.outputLines(ctx, lines) })
		}
	}
}

// handleCommands runs the handlers of each command the agent wrote, one at
// a time, in order, and types back what they return.
func (s *Session) handleCommands(ctx context.Context) {
	// Nothing the agent wrote is acted on before its name is its own: a
	// refused session's commands never reach a peer (overlap.go).
	if !s.claimed(ctx) {
		return
	}
	for {
		c, ok := s.cmds.queue.Get(ctx)
		if !ok {
			return
		}
		s.log.Info("command", "ns", c.NS, "target", c.Target, "bytes", len(c.Body))
		results, err := s.spec.reg.Dispatch(withSession(ctx, s), c)
		for _, r := range results {
			switch {
			case r.Inject == "":
			case r.Own:
				s.ownNote(r.Inject)
			default:
				s.notice(r.Inject)
			}
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			for _, e := range splitErrors(err) {
				var pe *patterns.PanicError
				if errors.As(e, &pe) {
					s.log.Error("handler panicked", "ns", c.NS, "err", e, "stack", string(pe.Stack))
				} else {
					s.log.Warn("handler failed", "ns", c.NS, "err", e)
				}
				s.notice(failureNotice(e))
			}
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
	if v := s.cmds.damper.Check(time.Now(), name, to, hops); !v.OK {
		s.log.Warn("message held", "to", to, "why", v.Why, "quiet", v.Quiet)
		if v.Quiet {
			// Held again within the window: counted, not reported again,
			// so that a notice is never the cause of another notice.
			return "", false
		}
		if cl := s.link.client.Load(); cl != nil {
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
	api, err := s.memory()
	if err != nil {
		return patterns.Result{Inject: "@memory is unavailable: the hub is unreachable."}, nil
	}
	reply, err := memory.Handle(ctx, api, s.name(), s.cfg.Workspace, c.Target, c.Body)
	if err != nil {
		s.log.Warn("memory", "verb", c.Target, "err", err)
	}
	return patterns.Result{Inject: reply}, nil
}

// splitErrors undoes errors.Join: each handler's failure is told on its
// own line.
func splitErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// didYouMeanRE finds the bus's hint for a name that differs only in case.
var didYouMeanRE = lazyre.New(`\(did you mean "([^"]+)"\?\)`)

// unknownAgentNotice tells the agent, in one sentence, that its message
// went to a name nobody has joined under, with the bus's "did you mean
// Bob?" when a name differs only in case.
func unknownAgentNotice(env bus.Envelope, workspace string, err error) string {
	hint := ""
	if m := didYouMeanRE().FindStringSubmatch(err.Error()); m != nil {
		hint = fmt.Sprintf(" (did you mean %s?)", m[1])
	}
	return fmt.Sprintf("No agent named %s has joined workspace %s yet%s; your message (id %s) waits in its inbox in case one does.",
		env.To, workspace, hint, env.ID)
}

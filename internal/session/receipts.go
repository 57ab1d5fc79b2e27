package session

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relayhq/relay/bus"
)

// Timings of the seen and answered receipts.
const (
	// seenWait bounds how long a message typed into a model CLI waits for
	// the CLI's own record (its hooks, transcript, rollout or chat file)
	// to show the prompt that carried it, and a line typed into a shell
	// for the shell to read it, before relay stops looking: the message
	// stays delivered, never seen without proof.
	seenWait = time.Minute
	// answerMemory is how long a message waits for its answer: an answer
	// later than that is not taken for this message's.
	answerMemory = time.Hour
	// maxUnanswered bounds the messages per sender that wait for an
	// answer; the oldest go first.
	maxUnanswered = 64
)

// receipts is what the seen and answered receipts need: whether the last
// injection was read by the child, and the messages delivered whose
// sender has had no message from this agent since.
type receipts struct {
	read atomic.Bool // the last injection's Enter was read by the child

	mu         sync.Mutex
	unanswered map[string][]sentTo // by sender, lower case
}

// sentTo is a delivered message waiting for its answer.
type sentTo struct {
	env bus.Envelope
	at  time.Time
}

// typedRead notes whether the child read the injection just typed (its
// Enter): the next delivered report is for that injection.
func (s *Session) typedRead(ok bool) { s.inbox.rcpt.read.Store(ok) }

// deliveredNow follows a message just typed in: it waits for an answer to
// its sender and, in a plain shell, is seen once the shell read its line.
func (s *Session) deliveredNow(ctx context.Context, d *bus.Delivery) {
	if d.Envelope.Kind == bus.KindNotice {
		return
	}
	s.inbox.rcpt.mu.Lock()
	if s.inbox.rcpt.unanswered == nil {
		s.inbox.rcpt.unanswered = map[string][]sentTo{}
	}
	k := strings.ToLower(d.Envelope.From)
	w := append(s.inbox.rcpt.unanswered[k], sentTo{env: d.Envelope, at: time.Now()})
	if len(w) > maxUnanswered {
		w = w[len(w)-maxUnanswered:]
	}
	s.inbox.rcpt.unanswered[k] = w
	s.inbox.rcpt.mu.Unlock()

	if s.spec.prof.Model {
		return // seen once confirmed (seenByModel)
	}
	if s.inbox.rcpt.read.Load() {
		_ = d.PostReceipt(bus.StatusSeen, "read by the shell")
		return
	}
	r, ok := s.child.in.(interface{ WaitRead(time.Duration) bool })
	if !ok {
		return
	}
	s.grp.Go(func() {
		if r.WaitRead(seenWait) && ctx.Err() == nil {
			_ = d.PostReceipt(bus.StatusSeen, "read by the shell")
		}
	})
}

// seenByModel follows a message typed into a model CLI once the agent took
// it (confirm): it is seen when the CLI's own record shows the prompt that
// carried its first line (the sender and id). Claude Code's hooks report
// the prompt before confirm returns, or took the message in the Stop
// hook's answer; Codex's and Gemini CLI's files show it a moment later. A
// CLI relay has no record of reports what its screen showed.
func (s *Session) seenByModel(ctx context.Context, d *bus.Delivery, text string) {
	first, _, _ := strings.Cut(text, "\n")
	if why, ok := s.seenNow(first); ok {
		_ = d.PostReceipt(bus.StatusSeen, why)
		return
	}
	s.grp.Go(func() {
		if err := s.waitPrompt(ctx, first, seenWait); err != nil {
			s.log.Info("typed message not seen in the CLI's record", "id", d.Envelope.ID, "err", err)
			return
		}
		_ = d.PostReceipt(bus.StatusSeen, seenInPrompt)
	})
}

// seenInPrompt is the seen receipt's reason when the CLI's record shows
// the prompt.
const seenInPrompt = "in the prompt"

// seenNow says whether a message whose first line is first, confirmed
// taken, is seen already, and by what proof.
func (s *Session) seenNow(first string) (string, bool) {
	switch {
	case s.spec.src == nil:
		return "screen: the input box took it", true
	case s.promptHas(first):
		return seenInPrompt, true
	case s.turnsExact():
		// Confirmed without a prompt: its Stop hook took it.
		return "handed over by the Stop hook", true
	}
	return "", false
}

// errNoPrompt says that the CLI's record never showed a prompt.
var errNoPrompt = errors.New("no prompt in the CLI's record holds it")

// waitPrompt waits until a prompt that reached the model holds line.
func (s *Session) waitPrompt(ctx context.Context, line string, max time.Duration) error {
	s.hurryRecord()
	deadline := time.Now().Add(max)
	for !s.promptHas(line) {
		if time.Now().After(deadline) {
			return errNoPrompt
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// hurryRecord has the CLI's record (agents.Follower) read at its fast
// pace for a while: relay typed a prompt and looks for it there.
func (s *Session) hurryRecord() {
	if h, ok := s.spec.src.(interface{ Hurry() }); ok {
		h.Hurry()
	}
}

// answered records that the agent's message env reached its recipient's
// inbox: every message from that recipient delivered before it is
// answered by it.
func (s *Session) answered(env bus.Envelope) {
	if env.To == bus.Broadcast || env.Kind != "" && env.Kind != bus.KindMessage {
		return
	}
	k := strings.ToLower(env.To)
	s.inbox.rcpt.mu.Lock()
	w := s.inbox.rcpt.unanswered[k]
	delete(s.inbox.rcpt.unanswered, k)
	s.inbox.rcpt.mu.Unlock()
	c := s.link.client.Load()
	if c == nil {
		return
	}
	for _, x := range w {
		if time.Since(x.at) < answerMemory {
			if err := c.PostAnswered(x.env, env); err != nil {
				s.log.Warn("answered receipt", "id", x.env.ID, "err", err)
			}
		}
	}
}

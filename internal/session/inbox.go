package session

import (
	"cmp"
	"context"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
)

// Timings of the inbox.
const (
	// reconnectEvery is how often a session that started without its hub
	// tries again.
	reconnectEvery = 2 * time.Second
	// holdRetry is when a message held by a MessageReceived hook comes
	// back for another look.
	holdRetry = 30 * time.Second
	// failRetry is when a message that could not be typed comes back.
	failRetry = 5 * time.Second
	// leaseEvery is how often a message waiting to be typed tells the hub
	// it is still in progress (well inside ackWait).
	leaseEvery = 3 * time.Second
	// heldAfter is how long a message waits to be typed before its sender
	// is told why (a "held" receipt): one typed sooner was not held, and a
	// backlog that drains at thousands a second (a stream into a shell)
	// stores no held receipt beside each delivered one.
	heldAfter = time.Second
)

// shellBatch is how many messages a plain shell's inbox gathers, at most,
// while the hub holds more, before it hands them to the delivery queue:
// one pull's worth, so typing starts while the rest of a burst arrives.
const shellBatch = 64

// inboxStage holds the incoming messages from the hub until they are
// typed. Its goroutine (serveInbox) hands each batch to the delivery
// queue, which types on a goroutine of its own; queue and journal are set
// before the stages start (journal before the inbox runs), and waiting and
// rcpt have their own locks (watchdog.go, receipts.go).
type inboxStage struct {
	queue   *delivery.Queue
	journal *delivery.Journal
	waiting *waiters // incoming messages not yet typed (watchdog.go)
	rcpt    receipts // what the seen and answered receipts need (receipts.go)
}

func newInboxStage() inboxStage { return inboxStage{waiting: newWaiters()} }

// serveInbox connects (again and again, if the hub was away at start),
// then hands the incoming messages to the delivery queue, each batch the
// hub sent together at once, so that a burst is typed as one injection.
// Each message is acknowledged to the hub as soon as it was typed in.
func (s *Session) serveInbox(ctx context.Context) {
	// An agent that exited while its claim was answered (an overlapped
	// start of a short command) has nothing to read its messages; nor has
	// one that exited before this goroutine first ran (childGone): opening
	// the inbox then (a request, its ConsumerInfo decoded, a second
	// request) delayed the exit of a command that ends at once (issue 34).
	if s.alone() || !s.claimed(ctx) || s.end.ended.Load() || s.childGone() {
		return
	}
	for s.link.client.Load() == nil {
		select {
		case <-ctx.Done():
			return
		case <-time.After(reconnectEvery):
		}
		cctx, cancel := context.WithTimeout(ctx, connectWait)
		if err := s.connect(cctx); err != nil {
			s.log.Debug("hub still unreachable", "err", err)
		}
		cancel()
	}
	c := s.link.client.Load()
	s.grp.Go(func() { s.serveControl(ctx, c) })
	// A plain shell takes a long burst line by line at no cost, so its
	// inbox hands over the first messages while the rest still arrive; a
	// model agent gets a burst whole, in one prompt.
	per := bus.MaxBatch
	if !s.spec.prof.Model {
		per = shellBatch
	}
	if err := c.InboxBatchesOf(ctx, per, s.receiveAll); err != nil && ctx.Err() == nil {
		s.log.Error("inbox stopped", "err", err)
	}
}

// receiveAll queues a batch of incoming messages for typing, together.
func (s *Session) receiveAll(ctx context.Context, ds []*bus.Delivery) {
	items := make([]delivery.Item, 0, len(ds))
	var taken []*bus.Delivery
	agents := map[string]bool{} // each sender looked up once a batch
	l := newLease()
	for _, d := range ds {
		from := d.Envelope.From
		if _, ok := agents[from]; !ok {
			agents[from] = s.isAgent(ctx, from)
		}
		if it, ok := s.accept(ctx, d, agents[from], l); ok {
			items, taken = append(items, it), append(taken, d)
		}
	}
	if len(taken) > 0 {
		// Said once the messages waited a moment, so that the sender (and
		// relay log) knows why it waits; they go in when that ends.
		l.held = s.waitReason
		s.grp.Go(func() { l.run(ctx, leaseEvery) })
	}
	s.inbox.queue.AddAll(items)
}

// accept runs the MessageReceived hooks on one incoming message and
// returns the item to type for it; false when a hook refused or held it
// (the delivery is settled then). agent says whether its sender is an
// agent of the workspace; l keeps the message's lease until it is typed.
func (s *Session) accept(ctx context.Context, d *bus.Delivery, agent bool, l *lease) (delivery.Item, bool) {
	env := d.Envelope
	s.inbox.waiting.arrive(d, time.Now())
	s.heard(env.From, env.ID, env.Hops, time.Now())
	s.events.recent.addMessage(env)
	verdict := s.fire(ctx, EventInfo{Event: MessageReceived, ID: env.ID, From: env.From, To: env.To, Body: env.Body, Thread: env.Thread})
	switch {
	case verdict.Block:
		reason := verdict.Reason
		if reason == "" {
			reason = "refused by a MessageReceived hook"
		}
		s.log.Info("message refused", "id", env.ID, "from", env.From, "reason", reason)
		s.inbox.waiting.gone(env.ID)
		_ = d.Fail(context.WithoutCancel(ctx), reason)
		return delivery.Item{}, false
	case verdict.Hold:
		s.log.Info("message held by a hook", "id", env.ID, "from", env.From)
		s.inbox.waiting.hold(env.ID)
		_ = d.Nak(holdRetry)
		return delivery.Item{}, false
	case verdict.Message != nil:
		env.Body = *verdict.Message
	}

	l.add(d)
	finish := func() { l.done(d) }
	from := delivery.Sender{Name: env.From, ToAll: env.To == bus.Broadcast, Human: env.Human || !agent}
	text := s.form().MessageFrom(from, env.ID, env.Body)
	// Receipts are stored in the background, in order, so that typing
	// never waits for the hub; the message is acknowledged once its
	// "delivered" receipt is stored.
	// Repeats are told apart by sender and id: another agent that sends an
	// envelope with this message's id (learnt from its own copy of a
	// broadcast) cannot make this one pass for a repeat.
	key := journalKey(env)
	if s.inbox.journal.Seen(env.ID) {
		// Typed by a relay that journaled bare ids (before an upgrade):
		// never typed twice. No key of this relay is a bare id.
		key = env.ID
	}
	return delivery.Item{ID: key, Text: text, Done: func(st delivery.Status, reason string) {
		switch st {
		case delivery.StatusDelivered:
			s.inbox.waiting.gone(env.ID)
			finish()
			s.events.idle.rearm(time.Now()) // a peer's message is real work
			_ = d.AckWithReceipt(bus.StatusDelivered, reason)
			if reason != delivery.AlreadyDelivered {
				s.deliveredNow(ctx, d) // receipts.go
			}
		case delivery.StatusConfirmed:
			s.seenByModel(ctx, d, text)
		case delivery.StatusFailed:
			seen := s.inbox.journal.Seen(key)
			if seen {
				s.inbox.waiting.gone(env.ID)
			}
			finish()
			_ = d.PostReceipt(bus.StatusFailed, reason)
			if !seen {
				_ = d.Nak(failRetry) // comes back for another try
			}
		}
	}}, true
}

// waitReason says why a message arriving now cannot be typed at once, or
// "" when the agent can take it.
func (s *Session) waitReason() string {
	why, ready, human := "", false, false
	s.read(func(st *state) { ready, human = st.deliveryState().Ready, st.human })
	if ready && !human && s.shellReady() {
		// Said before the screen's state: while vim runs, its screen is
		// no turn of the shell's.
		if why := s.shellHold(); why != "" {
			return why
		}
	}
	s.read(func(st *state) {
		d := st.deliveryState()
		switch {
		case !d.Ready:
			why = "starting: it goes in when the agent first reads input"
		case st.human:
			why = "draft: the human's line is unfinished"
		case d.Waiting:
			why = "blocked: " + st.waitsOn()
		case d.Draft:
			why = "draft: the agent's input box holds text"
		case d.Busy:
			why = "busy: it goes in when the agent's turn ends"
		}
	})
	if why == "" && s.child.in != nil {
		// The queue also waits while the human is typing.
		quiet := cmp.Or(s.cfg.HumanQuiet, delivery.DefaultHumanQuiet)
		if t := s.child.in.LastHuman(); !t.IsZero() && time.Since(t) < quiet {
			why = "typing: the human typed just now"
		}
	}
	return why
}

// isAgent reports whether name is an agent of the workspace, so that a
// message from a human (relay send, the dashboard) is not introduced as
// one from an agent. When the hub cannot say, it is taken for an agent, as
// before.
func (s *Session) isAgent(ctx context.Context, name string) bool {
	c := s.link.client.Load()
	if c == nil {
		return true
	}
	actx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ok, err := c.IsAgent(actx, name)
	if err != nil {
		s.log.Debug("is the sender an agent", "from", name, "err", err)
		return true
	}
	return ok
}

// notice types a short note from relay into the agent.
func (s *Session) notice(text string) {
	if s.end.ended.Load() {
		s.log.Warn("not typed: the agent has exited", "text", text)
		return
	}
	s.end.notices.Add(1)
	s.inbox.queue.Add(delivery.Item{Text: s.form().Notice(text)})
}

// ownNote types a note in relay's own words or from the user's own
// configuration (a reminder, a configured hook's text, a Go handler's
// result) into the agent, its commands intact (delivery.Form.Own).
func (s *Session) ownNote(text string) {
	if s.end.ended.Load() {
		s.log.Warn("not typed: the agent has exited", "text", text)
		return
	}
	s.end.notices.Add(1)
	s.inbox.queue.Add(delivery.Item{Text: s.form().Own(text)})
}

// form is how text is typed into this agent: labelled for a model, or one
// comment line for a plain shell (so that nothing a peer writes can run as
// a shell command), capped on what is typed, neutralised so that it can
// never be read back as the agent's own command.
func (s *Session) form() delivery.Form {
	return delivery.Form{Shell: !s.spec.prof.Model, Mentions: s.spec.prof.EscapeMentions, Max: s.cfg.MaxBodyBytes}
}

// journalKey is what the delivery queue and journal know a message by:
// its sender and its id (FROM/ID).
func journalKey(env bus.Envelope) string { return env.From + "/" + env.ID }

package session

import (
	"context"
	"github.com/relayhq/relay/internal/mailbox"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/scanner"
)

// state is what the session knows of its agent and itself. Only the owner
// goroutine (own) touches it: every other stage sends it a function (do,
// read), so state changes are seen in the order they happened, by the
// delivery queue, the hub and the Idle event alike.
type state struct {
	started bool   // the stages run: push may reach them
	name    string // the agent's name, once the hub accepted it
	url     string // the hub's URL, once known

	screen scanner.State // from the screen model
	turn   agents.Turn   // from the exact source, when it reports turns
	ready  bool          // the agent was idle once
	busy   bool          // the last state pushed, for Idle events
	// clockIdle is what the idle clock was last told: idle only once the
	// agent has shown it is ready (a zero screen state at the start is
	// not an idle agent, and Idle must not run before it has drawn).
	clockIdle bool
	human     bool // the human's line is unfinished
	// promptBack: a shell echoed relay's last line and shows its prompt
	// again (ready.go): idle, before its screen has been quiet.
	promptBack bool

	lastFrom map[string]received // the last message from each peer
	primer   string              // typed at the first idle moment; "" once typed
	prompt   string              // Config.Prompt, typed after the primer; "" once typed
	prompts  []string            // the last prompts that reached the model

	presence     bus.State // the last state told to the hub
	presenceAsk  *bus.Ask  // and the prompt told with it
	presenceSent bool

	blocked // the prompt the agent waits on, following the screen (blocked.go)
}

// received notes a message from a peer, for the hop count of the answer.
type received struct {
	id   string
	hops int
	at   time.Time
}

// maxPrompts is how many prompts are remembered for confirming typing.
const maxPrompts = 16

// owner is the goroutine that confines the session's state: it runs the
// functions the other stages send it (do, read), one at a time, in the
// order sent, until the session's context ends; done is closed then, and
// later functions are dropped. ops and done are made before it starts and
// never change.
type owner struct {
	ops  chan func(*state)
	done chan struct{}
}

func newOwner() owner {
	return owner{ops: make(chan func(*state), 256), done: make(chan struct{})}
}

// run runs the owner until ctx ends. It must be the only goroutine that
// touches st.
func (o owner) run(ctx context.Context, st *state) {
	for {
		select {
		case <-ctx.Done():
			close(o.done)
			return
		case f := <-o.ops:
			f(st)
		}
	}
}

// do has the owner run f, after everything sent before; it does not wait.
// After the session ended f is dropped.
func (o owner) do(f func(*state)) {
	select {
	case o.ops <- f:
	case <-o.done:
	}
}

// read has the owner run f and waits for it; false when the session ended
// first (f did not run).
func (o owner) read(f func(*state)) bool {
	done := make(chan struct{})
	select {
	case o.ops <- func(st *state) { f(st); close(done) }:
	case <-o.done:
		return false
	}
	select {
	case <-done:
		return true
	case <-o.done:
		return false
	}
}

// do and read are the owner's (above), for the session's stages.
func (s *Session) do(f func(*state))        { s.owner.do(f) }
func (s *Session) read(f func(*state)) bool { return s.owner.read(f) }

// name returns the agent's name.
func (s *Session) name() string {
	name := s.cfg.Name
	s.read(func(st *state) { name = st.name })
	return name
}

// deliveryState is what the delivery queue must know: busy and waiting
// from the exact source when it reports turns, else from the screen; a
// draft always from the screen, and from the human's keys.
func (st *state) deliveryState() delivery.State {
	d := delivery.State{Ready: st.ready, Busy: st.screen.Busy, Draft: st.screen.Draft || st.human, Waiting: st.screen.Waiting}
	if st.turn.Exact {
		d.Busy, d.Waiting = st.turn.Busy, st.turn.Waiting
	}
	if st.promptBack && st.ready {
		d.Busy = false
	}
	return d
}

// push tells the stages what the agent does now, from the owner: the
// delivery queue at once; an Idle event and the exact source when a turn
// ended; the hub (through the presence stage, latest first) when its state
// changed. It runs on the owner goroutine.
func (s *Session) push(st *state) {
	d := st.deliveryState()
	becameIdle := st.busy && !d.Busy
	if d.Busy || st.busy {
		s.typing.busyAt.Store(time.Now().UnixNano()) // busy now, or until now
	}
	if idle := d.Ready && !d.Busy; idle != st.clockIdle {
		st.clockIdle = idle
		s.events.idle.setBusy(!idle, time.Now())
	}
	st.busy = d.Busy
	if d.Ready && !d.Busy && st.primer != "" {
		// Typed like a message, before anything else waiting.
		s.inbox.queue.Requeue([]delivery.Item{{Text: "[relay] " + st.primer}})
		st.primer = ""
	}
	if d.Ready && !d.Busy && st.prompt != "" {
		// The team file's prompt, once, as a SessionStart hook's answer.
		s.ownNote(st.prompt)
		st.prompt = ""
	}
	s.inbox.queue.SetState(d)
	if becameIdle {
		if s.spec.src != nil {
			s.spec.src.Idle()
		}
	}
	bst, ask := bus.StateIdle, (*bus.Ask)(nil)
	switch {
	case d.Waiting:
		bst, ask = bus.StateBlocked, st.ask
	case d.Busy:
		bst = bus.StateBusy
	}
	if !st.presenceSent || bst != st.presence || ask != st.presenceAsk {
		st.presence, st.presenceAsk, st.presenceSent = bst, ask, true
		s.link.presence.set(bst, ask)
	}
}

// onScreenState records the screen model's state.
func (s *Session) onScreenState(ss scanner.State, title string) {
	titleOK := s.spec.prof.ReadyTitle == "" || strings.Contains(title, s.spec.prof.ReadyTitle)
	if !ss.Busy {
		s.learnPrompt() // a shell's first idle screen shows its primary prompt
	}
	s.do(func(st *state) {
		st.screen = ss
		s.followDialog(st)
		s.screenAsk(st)
		if !ss.Busy && titleOK {
			st.ready = true
		}
		if !ss.Busy {
			// Quiet says it too; the prompt's word is no longer needed.
			st.promptBack = false
			// Output on the screen path follows the screen, not the idle
			// edge (a line drawn before the first state report is still
			// seen); posted before push, so before the Idle it may cause.
			s.events.jobs.post(s.screenOutputJob)
		}
		s.push(st)
	})
	if !ss.Busy {
		s.typing.ready.arm(nil) // the fallback: quiet came first
	}
}

// onTurn records the state the exact source reports.
func (s *Session) onTurn(t agents.Turn) {
	s.do(func(st *state) {
		if t.Exact {
			st.ready = true
		}
		st.turn = t
		s.turnAsk(st)
		s.push(st)
	})
}

// onHumanLine records whether the human's line is unfinished.
func (s *Session) onHumanLine(unfinished bool) {
	s.typing.humanLine.Store(unfinished)
	if unfinished {
		s.typing.lineWake.Notify()
	}
	s.do(func(st *state) {
		st.human = unfinished
		s.push(st)
	})
}

// idle reports whether the agent was idle at the last state change.
func (s *Session) idle() bool {
	idle := false
	s.read(func(st *state) { idle = !st.busy })
	return idle
}

// prompted records prompts that reached the model, for confirm.
func (s *Session) prompted(prompts []string) {
	s.do(func(st *state) {
		st.prompts = append(st.prompts, prompts...)
		if len(st.prompts) > maxPrompts {
			st.prompts = st.prompts[len(st.prompts)-maxPrompts:]
		}
	})
}

// promptHas reports whether a prompt that reached the model holds line.
func (s *Session) promptHas(line string) bool {
	found := false
	s.read(func(st *state) {
		for _, p := range st.prompts {
			if strings.Contains(p, line) {
				found = true
				return
			}
		}
	})
	return found
}

// heard notes a message from a peer, for the hop count of the answer.
func (s *Session) heard(from, id string, hops int, at time.Time) {
	s.do(func(st *state) {
		st.lastFrom[strings.ToLower(from)] = received{id: id, hops: hops, at: at}
	})
}

// presenceStage tells the hub the agent's state, in order, the latest
// first: a state superseded before it was sent is never sent after it.
// It holds one value, not a queue: the owner sets it, the stage's goroutine
// (run) takes and sends it; mu guards the value, and wake is a token
// ("a newer state waits"), read by run only.
type presenceStage struct {
	wake  mailbox.Signal
	mu    sync.Mutex
	state bus.State
	ask   *bus.Ask // the prompt of a blocked state
	dirty bool
}

func newPresenceStage() *presenceStage {
	return &presenceStage{wake: mailbox.NewSignal()}
}

func (p *presenceStage) set(st bus.State, ask *bus.Ask) {
	p.mu.Lock()
	p.state, p.ask, p.dirty = st, ask, true
	p.mu.Unlock()
	p.poke()
}

// restore marks st as still to be sent unless a newer state was set, and
// does not wake the stage: the next connect does.
func (p *presenceStage) restore(st bus.State, ask *bus.Ask) {
	p.mu.Lock()
	if !p.dirty {
		p.state, p.ask, p.dirty = st, ask, true
	}
	p.mu.Unlock()
}

// poke wakes the stage to send what is pending.
func (p *presenceStage) poke() { p.wake.Notify() }

func (p *presenceStage) take() (bus.State, *bus.Ask, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ask, ok := p.state, p.ask, p.dirty
	p.dirty = false
	return st, ask, ok
}

// run sends each new state to the hub (client, nil while there is none)
// until ctx ends. Once the agent is gone it sends none: its wrapper marks
// it offline as it closes, and an update under way holds that back by a
// round trip (the client keeps its claim locked until the hub answers),
// on the exit's path of a command that ends at once (issue 34).
func (p *presenceStage) run(ctx context.Context, client func() *bus.Client, gone func() bool, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		// Without a client the state stays pending: connect wakes the
		// stage again once it has stored one (a state taken here and
		// dropped left a late-joining agent "starting").
		c := client()
		if c == nil {
			continue
		}
		st, ask, ok := p.take()
		if !ok || gone() {
			continue
		}
		if err := c.SetStateAsk(ctx, st, ask); err != nil && ctx.Err() == nil {
			log.Debug("presence", "state", st, "err", err)
			p.restore(st, ask) // sent again after the next connect
		}
	}
}

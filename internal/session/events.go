package session

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/mailbox"
)

// eventStage runs the handlers of the session's events. Slow reactions
// (Idle and Output handlers, MessageSent) run on the jobs goroutine, one
// at a time; the idle clock has its own goroutine (runIdle) and lock;
// recent has its own lock; lastScreen belongs to the jobs goroutine.
type eventStage struct {
	jobs       *jobs
	idle       *idleClock
	recent     recent // the agent's last lines and messages, for events
	lastScreen string // the screen at the last Output job; the jobs goroutine's
}

func newEventStage(now time.Time) eventStage {
	return eventStage{jobs: newJobs(), idle: newIdleClock(now)}
}

// jobs runs the session's slow reactions (Idle and Output handlers) one at
// a time, in the order they were posted, on one goroutine of the session's
// group, so that none outlives the session and a state change never waits
// for a handler.
type jobs struct {
	box *mailbox.Mailbox[func(context.Context)]
}

func newJobs() *jobs { return &jobs{box: mailbox.New[func(context.Context)]()} }

func (j *jobs) post(f func(context.Context)) { j.box.Put(f) }

// run runs the posted jobs until ctx ends.
func (j *jobs) run(ctx context.Context) {
	for {
		f, ok := j.box.Get(ctx)
		if !ok {
			return
		}
		f(ctx)
	}
}

// screenOutputJob fires Output for the lines new on the screen since the
// last call, when commands come from the screen: the agent's own lines,
// never the rows relay or the human typed on (OwnText).
func (s *Session) screenOutputJob(ctx context.Context) {
	if s.exactActive() {
		return
	}
	lines := s.newScreenLines(s.child.scr.OwnText())
	s.events.recent.addLines(lines)
	s.outputLines(ctx, lines)
}

func (s *Session) hasHandlers(ev Event) bool {
	return s.cfg.Events != nil && len(s.cfg.Events(ev)) > 0
}

// exactActive reports whether commands come from the agent's exact text.
func (s *Session) exactActive() bool { return s.spec.src != nil && s.spec.src.Active() }

// fire runs the handlers of an event in order, types what they return, and
// returns their merged verdict (for MessageReceived): a block or a stop
// ends the chain, the last rewrite wins. A handler that fails or panics is
// logged and told to the agent in one line; the session goes on.
func (s *Session) fire(ctx context.Context, e EventInfo) Result {
	if s.cfg.Events == nil {
		return Result{}
	}
	return s.fireAll(ctx, s.cfg.Events(e.Event), e)
}

// fireOne runs one handler of an event as fire does.
func (s *Session) fireOne(ctx context.Context, h EventFunc, e EventInfo) Result {
	return s.fireAll(ctx, []EventFunc{h}, e)
}

// fireAll runs hs for e, in order (see fire).
func (s *Session) fireAll(ctx context.Context, hs []EventFunc, e EventInfo) Result {
	if len(hs) == 0 {
		return Result{}
	}
	e.Agent, e.SessionID, e.Workspace = s.name(), s.spec.sid, s.cfg.Workspace
	e.RecentOutput, e.RecentMessages = s.events.recent.snapshot()
	ctx = withSession(ctx, s)
	var out Result
	for _, h := range hs {
		res, err := s.callEvent(ctx, h, e)
		if err != nil {
			s.log.Warn("event handler", "event", e.Event, "err", err)
			continue
		}
		switch {
		case res.Inject == "":
		case e.Event == BeforeToolCall:
			// Given to the model beside the tool call, not typed.
			out.Inject = joinLines(out.Inject, res.Inject)
		case res.Neutralize:
			s.notice(res.Inject)
		default:
			// The user's own hooks and handlers, relay's reminders:
			// their commands stay as written.
			s.ownNote(res.Inject)
		}
		if res.Message != nil {
			out.Message = res.Message
			e.Body = *res.Message
		}
		out.Hold = out.Hold || res.Hold
		if res.Block {
			out.Block, out.Reason = true, res.Reason
			return out
		}
		if res.Stop {
			out.Stop = true
			return out
		}
	}
	return out
}

// callEvent runs one event handler, turning a panic into an error.
func (s *Session) callEvent(ctx context.Context, h EventFunc, e EventInfo) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("event handler panicked", "event", e.Event, "panic", p, "stack", string(debug.Stack()))
			s.notice(fmt.Sprintf("The %s hook failed (it panicked: %v); relay goes on.", e.Event, p))
			res, err = Result{}, fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, e)
}

// outputLines fires Output for each non-blank line, when someone listens.
func (s *Session) outputLines(ctx context.Context, lines []string) {
	if !s.hasHandlers(Output) {
		return
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			s.fire(ctx, EventInfo{Event: Output, Line: l})
		}
	}
}

// newScreenLines returns the lines of the screen text now that were not on
// it at the last call (counted, so a line written again is new again), for
// Output on the screen path. Only the jobs goroutine calls it.
func (s *Session) newScreenLines(now string) []string {
	before := map[string]int{}
	for _, l := range strings.Split(s.events.lastScreen, "\n") {
		before[strings.TrimRight(l, " ")]++
	}
	s.events.lastScreen = now
	var out []string
	for _, l := range strings.Split(now, "\n") {
		l = strings.TrimRight(l, " ")
		if before[l] > 0 {
			before[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

// joinLines joins two texts with a line break, either may be empty.
func joinLines(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "\n" + b
}

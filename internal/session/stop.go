package session

import (
	"cmp"
	"context"
	"errors"
	"github.com/relayhq/relay/internal/wrapper"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/scanner"
)

// Timings of a graceful stop (relay stop).
const (
	// DefaultStopTimeout bounds the wait for the turn that the SessionEnd
	// hooks' text starts.
	DefaultStopTimeout = 2 * time.Minute
	// exitWait is how long the agent may take to exit after its profile's
	// exit command before relay sends SIGTERM, and after SIGTERM before
	// SIGKILL.
	exitWait = 10 * time.Second
	// unansweredWait is how long after its text was typed an agent that
	// never reacted counts as done with its last turn.
	unansweredWait = 5 * time.Second
)

// ending is how the session ends: relay stop (stopping, once asked) and
// the child's exit (ended, then exited closed, by Run). Atomics and a
// channel closed once; sigs is set by Run before the stages start.
type ending struct {
	stopping atomic.Bool
	// ended: the child exited; its handlers' text can no longer be typed.
	ended   atomic.Bool
	exited  chan struct{}
	notices atomic.Int64 // the notices queued, for stop
	// sigs are the signals caught for the whole session (exit.go).
	sigs *wrapper.Signals
	// refused: the claim answered beside the running child refused the
	// session (overlap.go); Run returns it.
	refused atomic.Pointer[error]
	// gone says whether the child has exited, before Run learns it (the
	// wrapper's Gone); stored by Run once the child started, read by
	// goroutines started before that (childGone).
	gone atomic.Pointer[func() bool]
}

// childGone reports whether the child has exited, though Run may not know
// it yet (wrapper.Session.Gone); false before the child started. Run
// learns of the exit only once the goroutine that reaps the child has run,
// and on the wrapper's one processor that is after the goroutines woken
// before it: the stages started beside the child, a credential's answer.
// What they would do for the agent can stand down on this instead of
// delaying the exit of a command that ends at once (issue 34).
func (s *Session) childGone() bool {
	f := s.end.gone.Load()
	return f != nil && (*f)()
}

func newEnding() ending { return ending{exited: make(chan struct{})} }

// serveControl answers the requests addressed to this agent on the hub
// (bus.ControlSubject) until ctx ends.
func (s *Session) serveControl(ctx context.Context, c *bus.Client) {
	err := c.ServeControl(ctx, func(req bus.Control) bus.ControlReply {
		if req.Op == bus.OpApprove {
			return s.approve(req)
		}
		if req.Op != bus.OpStop {
			return bus.ControlReply{Error: "unknown request " + req.Op}
		}
		s.log.Info("stop asked", "by", req.By, "timeout", req.Timeout)
		if s.end.stopping.CompareAndSwap(false, true) {
			s.grp.Go(func() { s.stop(ctx, cmp.Or(req.Timeout, DefaultStopTimeout)) })
		}
		return bus.ControlReply{OK: true, SessionID: s.spec.sid}
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("control requests", "err", err)
	}
}

// stop ends the session gracefully: the SessionEnd handlers run while the
// agent still runs and what they answer is typed in; relay waits (up to
// timeout) for the turn that starts, then ends the agent the way its
// profile says, then with SIGTERM.
func (s *Session) stop(ctx context.Context, timeout time.Duration) {
	before := s.end.notices.Load()
	s.fire(ctx, EventInfo{Event: SessionEnd, Stopping: true})
	if s.end.notices.Load() != before {
		if err := s.waitLastTurn(ctx, timeout); err != nil {
			s.log.Warn("stop: the agent's last turn did not end; ending it all the same", "err", err, "timeout", timeout)
		}
	}
	s.endChild(ctx)
}

// errTurnTimeout is why waitLastTurn gave up.
var errTurnTimeout = errors.New("no idle moment within the stop timeout")

// waitLastTurn waits until what was queued has been typed and the agent,
// having reacted to it (or not, for unansweredWait), is idle and quiet.
func (s *Session) waitLastTurn(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	settle := 2 * cmp.Or(s.spec.prof.Cues.QuietTime, scanner.DefaultQuietTime)
	var typed time.Time
	for {
		now := time.Now()
		if now.After(deadline) {
			return errTurnTimeout
		}
		if s.inbox.queue.Pending() == 0 {
			if typed.IsZero() {
				typed = now
			}
			idle, last := s.events.idle.quiet()
			reacted := last.After(typed)
			if idle && now.Sub(last) >= settle && (reacted || now.Sub(typed) >= unansweredWait) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.end.exited:
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// endChild ends the agent: its profile's exit command typed in, then
// SIGTERM, then SIGKILL, each after exitWait.
func (s *Session) endChild(ctx context.Context) {
	text := ""
	if s.spec.prof.Exit != nil {
		text = s.spec.prof.Exit(s.cfg.Command)
	}
	if text != "" {
		if err := s.typeText(ctx, text); err != nil {
			s.log.Warn("stop: could not type the exit command", "text", text, "err", err)
		} else if s.waitExit(ctx, exitWait) {
			return
		}
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if pid := s.child.pid(); pid > 0 {
			s.log.Info("stop: signalling the agent", "signal", sig)
			_ = syscall.Kill(pid, sig)
		}
		if s.waitExit(ctx, exitWait) {
			return
		}
	}
}

// waitExit reports whether the agent exited within d.
func (s *Session) waitExit(ctx context.Context, d time.Duration) bool {
	select {
	case <-s.end.exited:
		return true
	case <-ctx.Done():
		return true
	case <-time.After(d):
		return false
	}
}

package relay

import (
	"errors"
	"fmt"
	"time"
)

// IdleSchedule says when an Idle handler runs (OnIdle). The zero value is
// On(Idle)'s schedule: once per idle period, after 30 s.
type IdleSchedule struct {
	// After is how long the agent must have been idle (no output, no
	// typing) before the handler runs; zero means 30 s.
	After time.Duration
	// Every, when set, runs the handler again every Every while the agent
	// stays idle; zero runs it once per idle period.
	Every time.Duration
	// Max bounds the runs of one idle period when Every is set; zero
	// means 3.
	Max int
}

// ErrBadSchedule is wrapped by OnIdle given a schedule that could not run
// as written: a negative duration or count, or a Max above 1 without
// Every.
var ErrBadSchedule = errors.New("invalid idle schedule")

// check returns nil for a schedule that runs as written, else an error
// wrapping ErrBadSchedule that names the field.
func (s IdleSchedule) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("relay: OnIdle: %w: %s", ErrBadSchedule, fmt.Sprintf(format, a...))
	}
	switch {
	case s.After < 0:
		return bad("After is %v; want 0 (30 s) or more", s.After)
	case s.Every < 0:
		return bad("Every is %v; want 0 (once per idle period) or more", s.Every)
	case s.Max < 0:
		return bad("Max is %d; want 0 (3) or more", s.Max)
	case s.Max > 1 && s.Every == 0:
		return bad("Max is %d without Every, so it would run once; set Every to repeat", s.Max)
	}
	return nil
}

// OnIdle registers h for the Idle event on schedule s: h runs once the
// agent has been idle (no output, no typing) for s.After, and with
// s.Every again every s.Every while it stays idle, at most s.Max times per
// idle period. An idle period begins with real work (the session's start,
// the human's keys, a peer's message typed in); what relay types on its
// own, h's Inject included, never begins a new one, so h cannot keep the
// agent busy on its own. A schedule that could not run as written is
// refused with an error wrapping ErrBadSchedule, a nil handler with
// ErrNilHandler. On(Idle, h) is OnIdle(IdleSchedule{}, h).
func (r *Relay) OnIdle(s IdleSchedule, h EventFunc) error {
	if err := s.check(); err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("relay: OnIdle: %w", ErrNilHandler)
	}
	r.onIdle(s.After, s.Every, s.Max, h)
	return nil
}

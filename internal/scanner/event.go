package scanner

import (
	"fmt"
	"slices"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// EventKind says what an Event reports.
type EventKind uint8

const (
	// EventCommand: a command was found; Event.Command holds it.
	EventCommand EventKind = iota + 1
	// EventState: the agent's state changed; Event.State holds the new one.
	EventState
	// EventSkipped: bytes were dropped because the scanner fell behind;
	// Event.Skipped holds how many.
	EventSkipped
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EventCommand:
		return "command"
	case EventState:
		return "state"
	case EventSkipped:
		return "skipped"
	}
	return fmt.Sprintf("EventKind(%d)", k)
}

// State is the agent's state as read off its screen.
type State struct {
	// Busy is true while a busy cue is on screen or the screen is still
	// changing; false once it has been quiet for the cues' QuietTime, or
	// at once when the CLI says it is idle (Cues.StateOSC, IdleTitles).
	Busy bool
	// Draft is true when the input box holds text that is neither empty nor
	// a placeholder: someone is typing, so nothing may be injected.
	Draft bool
	// Waiting is true while the window title says the agent waits on its
	// human (Cues.WaitingTitles), e.g. for a tool approval, or a row of the
	// screen shows a dialog that does (Cues.Dialogs).
	Waiting bool
	// Dialog is the screen's text while Waiting (else ""), from which a
	// profile reads the prompt (agents.Profile.Dialog): a redraw of the
	// dialog is a change of state.
	Dialog string
}

// Event is one thing the scanner saw.
type Event struct {
	Kind EventKind
	Time time.Time
	// Command is set for EventCommand. Its Line and End index the scanner's
	// logical lines of that moment and mean little outside; use Row.
	Command patterns.Command
	// Row is the screen row of the command's first line (0 at the top);
	// negative when the line had already scrolled off.
	Row int
	// State is set for EventState.
	State State
	// Skipped is set for EventSkipped: the bytes dropped this time.
	Skipped int64
}

// Subscribe calls fn with every event from now on, until cancel is called.
// fn runs on the goroutine that fed the scanner and must not block.
func (s *Scanner) Subscribe(fn func(Event)) (cancel func()) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	id := s.subID
	s.subID++
	s.subs[id] = fn
	return func() {
		s.subMu.Lock()
		defer s.subMu.Unlock()
		delete(s.subs, id)
	}
}

// unlockAndEmit releases the lock and hands pending events to subscribers.
func (s *Scanner) unlockAndEmit() {
	s.waitable.Store(s.readNow && s.settled && s.state.Busy)
	s.readNow = false
	evs := s.events
	s.events = nil
	s.mu.Unlock()
	if len(evs) == 0 {
		return
	}
	for _, e := range evs {
		s.subMu.Lock()
		ids := make([]int, 0, len(s.subs))
		for id := range s.subs {
			ids = append(ids, id)
		}
		s.subMu.Unlock()
		slices.Sort(ids) // in subscription order
		for _, id := range ids {
			// Looked up each time: a subscriber cancelled by an earlier
			// call gets nothing more.
			s.subMu.Lock()
			fn := s.subs[id]
			s.subMu.Unlock()
			if fn != nil {
				fn(e)
			}
		}
	}
}

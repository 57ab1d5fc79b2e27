package session

import (
	"context"
	"errors"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
)

// Blocked: a permission dialog or question waits for the agent's human.
// Nothing is typed into the agent meanwhile (delivery.State.Waiting), its
// presence says blocked with the prompt (bus.Ask), and the prompt can be
// answered from anywhere by a human's credential (relay approve, the
// dashboard) through the profile's source (agents.Answerer).
//
// The exact source (Claude Code's hooks) says when a dialog opens; the
// screen says when it is gone: the human may answer it there (a choice,
// Esc) and no hook tells. So once the dialog was seen on screen, its
// going ends the wait at once; and after Esc the turn is over without a
// Stop hook, so a quiet screen then ends the turn too.

// blocked is the owner's record of the prompt the agent waits on.
type blocked struct {
	ask *bus.Ask // the prompt of the exact source's Waiting turn; nil when none or unknown
	// dialogSeen says the screen showed the dialog of the Waiting turn:
	// from then on its going means the human answered it.
	dialogSeen bool
	// answered says the human answered a dialog on screen and no hook has
	// spoken since: the turn ends when the screen is quiet (after Esc
	// Claude Code runs no Stop hook).
	answered bool
}

// turnAsk records the prompt of the turn the exact source reported.
func (s *Session) turnAsk(st *state) {
	st.answered = false
	t := st.turn
	switch {
	case !t.Waiting:
		st.ask, st.dialogSeen = nil, false
		return
	case st.screen.Waiting:
		st.dialogSeen = true
	}
	if t.Ask == nil {
		st.ask = nil
		return
	}
	if st.ask != nil && st.ask.ID == t.Ask.ID {
		return
	}
	st.ask = &bus.Ask{ID: t.Ask.ID, Tool: t.Ask.Tool, Input: t.Ask.Input, Detail: t.Ask.Detail,
		Options: t.Ask.Options, Since: time.Now().UTC()}
	s.onBlocked(*st.ask)
}

// followDialog makes the exact source's wait follow the screen: a dialog
// that was on screen and is gone was answered by the human.
func (s *Session) followDialog(st *state) {
	if st.turn.Exact && st.turn.Waiting {
		switch {
		case st.screen.Waiting:
			st.dialogSeen = true
		case st.dialogSeen:
			s.log.Info("the human answered the dialog on screen", "prompt", st.waitsOn())
			st.turn.Waiting, st.turn.Ask = false, nil
			st.ask, st.dialogSeen, st.answered = nil, false, true
			if a, ok := s.spec.src.(agents.Answerer); ok {
				a.Dismiss()
			}
		}
	}
	if st.answered && !st.screen.Busy {
		st.turn.Busy, st.answered = false, false
	}
}

// waitsOn says what a blocked agent waits on, for receipts and logs.
func (st *state) waitsOn() string {
	if st.ask != nil {
		return st.ask.Tool + " " + st.ask.Detail + " waits for its human's answer"
	}
	return "a dialog waits for its human's answer"
}

// errNoSuchPrompt means an approve named no prompt the agent waits on.
var errNoSuchPrompt = errors.New("no such prompt waits")

// approve answers the prompt the agent waits on (relay approve, the
// dashboard); the hub lets only a human's credential ask.
func (s *Session) approve(req bus.Control) bus.ControlReply {
	var ask *bus.Ask
	s.read(func(st *state) {
		if st.deliveryState().Waiting {
			ask = st.ask
		}
	})
	if ask == nil || (req.Ask != "" && req.Ask != ask.ID) {
		return bus.ControlReply{Error: errNoSuchPrompt.Error()}
	}
	a, ok := s.spec.src.(agents.Answerer)
	var err error
	switch {
	case ok:
		err = a.Answer(ask.ID, !req.Deny, req.Reason)
	case s.spec.prof.Dialog != nil:
		err = s.answerOnScreen(ask, req.Deny, req.Reason)
	default:
		return bus.ControlReply{Error: "this agent's prompts are answered on its screen only"}
	}
	if err != nil {
		s.log.Warn("prompt not answered", "by", req.By, "tool", ask.Tool, "detail", ask.Detail, "deny", req.Deny, "err", err)
		return bus.ControlReply{Error: err.Error()}
	}
	s.log.Info("prompt answered", "by", req.By, "tool", ask.Tool, "detail", ask.Detail, "deny", req.Deny)
	return bus.ControlReply{OK: true, SessionID: s.spec.sid}
}

// onBlocked fires the Blocked event for a new prompt, on the jobs
// goroutine: handlers only take note, and the owner never waits for them.
func (s *Session) onBlocked(ask bus.Ask) {
	if !s.hasHandlers(Blocked) {
		return
	}
	s.events.jobs.post(func(ctx context.Context) {
		s.fire(ctx, EventInfo{Event: Blocked, Tool: ask.Tool, ToolInput: ask.Input, Body: ask.Detail})
	})
}

package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
)

// Dialogs on screen: CLIs whose permission prompts no hook can answer
// (Codex, Gemini CLI) show them as dialogs, which the profile reads off the
// screen (agents.Profile.Dialog) while the scanner says the agent waits on
// its human. The prompt read is the agent's Ask (relay approvals, the
// Blocked event); relay approve answers it by the keys that select the
// dialog's option, typed only while the screen shows that very dialog and
// through the single writer (so no key of the human's comes between the
// look and the keys), and it is answered once the dialog is gone.

// dialogGone is how long relay approve waits for a dialog to go after its
// keys were typed.
const dialogGone = 5 * time.Second

// Errors of an answer typed into a dialog on screen.
var (
	// errDialogChanged means the screen no longer shows the dialog of the
	// prompt an approve names (answered meanwhile, or another one).
	errDialogChanged = errors.New("the screen no longer shows this prompt's dialog")
	// errDialogStays means the dialog was still on screen after its keys.
	errDialogStays = errors.New("the dialog did not take the answer")
)

// screenAsk follows the prompt of a dialog on screen, from the owner, for
// agents whose exact source does not report prompts: a new dialog is a
// new Ask (and a Blocked event); its redraws are the same one.
func (s *Session) screenAsk(st *state) {
	if s.spec.prof.Dialog == nil || st.turn.Exact {
		return
	}
	if !st.screen.Waiting {
		st.ask = nil
		return
	}
	d, ok := s.spec.prof.Dialog(st.screen.Dialog)
	if !ok {
		return // not drawn yet, or drawn in part: the last one read stands
	}
	if st.ask != nil && st.ask.Tool == d.Ask.Tool && st.ask.Detail == d.Ask.Detail {
		return
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	st.ask = &bus.Ask{ID: hex.EncodeToString(id), Tool: d.Ask.Tool, Input: d.Ask.Input, Detail: d.Ask.Detail,
		Options: d.Ask.Options, Since: time.Now().UTC()}
	s.onBlocked(*st.ask)
}

// sameDialog reads the dialog on screen now and reports whether it is the
// one of ask.
func (s *Session) sameDialog(ask *bus.Ask) (agents.ScreenDialog, bool) {
	d, ok := s.spec.prof.Dialog(s.child.scr.Text())
	return d, ok && d.Ask.Tool == ask.Tool && d.Ask.Detail == ask.Detail
}

// answerOnScreen answers ask by the keys of the dialog's option, then
// waits until the dialog is gone. A denial's reason is then typed in as a
// note: both CLIs end the turn on a refusal and wait to be told what to do
// instead, so that is how the model hears of it.
func (s *Session) answerOnScreen(ask *bus.Ask, deny bool, reason string) error {
	err := s.child.in.Inject(func(write func([]byte) error) error {
		d, ok := s.sameDialog(ask)
		if !ok {
			return errDialogChanged
		}
		keys := d.Allow
		if deny {
			keys = d.Deny
		}
		return write(keys)
	})
	if err != nil {
		return fmt.Errorf("answer %s on screen: %w", summary(ask), err)
	}
	deadline := time.Now().Add(dialogGone)
	for {
		if _, same := s.sameDialog(ask); !same {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("answer %s on screen: %w after %v", summary(ask), errDialogStays, dialogGone)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if deny {
		if reason == "" {
			reason = "no reason given"
		}
		s.ownNote(fmt.Sprintf("Your human denied the tool call %s (relay approve --deny): %s", summary(ask), reason))
	}
	return nil
}

// summary is a prompt in a few words: "shell: touch marker".
func summary(ask *bus.Ask) string {
	return agents.Ask{Tool: ask.Tool, Detail: ask.Detail}.Summary()
}

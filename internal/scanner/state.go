package scanner

import (
	"strings"
	"time"
)

// hasBusyCue reports whether a busy cue is on screen or the CLI said it
// is working.
func (s *Scanner) hasBusyCue() bool {
	if s.reportsWorking() {
		return true
	}
	for i := range s.rows {
		if s.rows[i].busy {
			return true
		}
	}
	return false
}

// hasBusyText reports whether a row's text holds a busy cue. It is worked
// out once when the row's text changes (rowState.busy), not on every pass.
func (s *Scanner) hasBusyText(text string) bool {
	for _, b := range s.cues.Busy {
		if strings.Contains(text, b) {
			return true
		}
	}
	return false
}

// saysIdle reports whether the CLI itself says its turn is over (a state
// report of idle or done, an idle window title): then the screen need not
// stay quiet for QuietTime before the agent counts as idle, which saves
// that much on every message to or from it. Only for the end of a turn
// seen after the screen was first idle: at start Gemini CLI says "Ready"
// seconds before it reads its input box, and Codex reports a spurious
// working/idle pair.
func (s *Scanner) saysIdle() bool {
	return s.worked && (s.oscState == "idle" || s.oscState == "done" || s.titleHas(s.cues.IdleTitles))
}

// reportsWorking reports whether the CLI's state report or window title
// says it is working or waiting on its human.
func (s *Scanner) reportsWorking() bool {
	return s.oscState == "working" || s.titleHas(s.cues.BusyTitles) || s.titleHas(s.cues.WaitingTitles)
}

// draft reports whether the input box holds text someone typed.
func (s *Scanner) draft() bool {
	top, bottom := s.inputBox()
	if top < 0 {
		return false
	}
	if s.cues.InputFrame { // the box's last row is the TUI's own
		bottom--
	}
	var parts []string
	for y := top; y <= bottom; y++ {
		r := s.rows[y]
		if t, _ := s.promptGlyph(r.text); strings.TrimSpace(t) != "" && !r.faint {
			parts = append(parts, strings.TrimSpace(t))
		}
	}
	t := strings.Join(parts, " ")
	if t == "" {
		return false
	}
	for _, p := range s.cues.Placeholders {
		if strings.HasPrefix(p, t) || strings.HasPrefix(t, p) {
			return false
		}
	}
	return true
}

// updateState recomputes the state and queues an event when it changed.
func (s *Scanner) updateState(now time.Time) {
	quiet := now.Sub(s.lastChange) >= s.quietNeed()
	busyCue := s.hasBusyCue()
	// The input box is up: drawn, and with PasteMode the CLI reads it.
	boxUp := s.cues.Prompt == "" || s.inputRow() >= 0 && (!s.cues.PasteMode || s.scr.BracketedPaste())
	switch {
	case quiet && !busyCue && boxUp:
		// Idle with its input box drawn: the quiet of a blank screen
		// while the CLI loads does not count.
		s.quietOnce = true
	case s.quietOnce && s.reportsWorking():
		s.worked = true
	}
	// Until its first idle moment, a CLI with an input box is busy while
	// the box is not drawn, however quiet its screen: Qwen Code names its
	// window and draws its header seconds before it shows
	// "Initializing...", then its input box, and drops what is typed
	// before the box is there; Gemini CLI draws its box before it reads
	// it (Cues.PasteMode).
	starting := !s.quietOnce && !boxUp
	st := State{
		Busy:    busyCue || starting || !quiet && !s.saysIdle(),
		Draft:   s.draft(),
		Waiting: s.titleHas(s.cues.WaitingTitles) || s.hasDialog(),
	}
	if st.Waiting {
		st.Dialog = s.scr.Text()
	}
	if s.stateKnown && st == s.state {
		return
	}
	s.state, s.stateKnown = st, true
	s.events = append(s.events, Event{Kind: EventState, Time: now, State: st})
}

// hasDialog reports whether a row shows a dialog cue (Cues.Dialogs).
func (s *Scanner) hasDialog() bool {
	if len(s.cues.Dialogs) == 0 {
		return false
	}
	for i := range s.rows {
		if s.rows[i].dialog {
			return true
		}
	}
	return false
}

// hasDialogText reports whether a row's text holds a dialog cue, worked
// out once when the row's text changes (rowState.dialog).
func (s *Scanner) hasDialogText(text string) bool {
	for _, d := range s.cues.Dialogs {
		if strings.Contains(text, d) {
			return true
		}
	}
	return false
}

// titleHas reports whether the window title holds one of texts.
func (s *Scanner) titleHas(texts []string) bool {
	if len(texts) == 0 {
		return false
	}
	title := s.scr.Title()
	for _, t := range texts {
		if strings.Contains(title, t) {
			return true
		}
	}
	return false
}

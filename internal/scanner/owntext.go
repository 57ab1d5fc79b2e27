package scanner

import (
	"strings"

	"github.com/relayhq/relay/internal/screen"
)

// markHuman: a row the child drew while the human's line was unfinished
// (the echo of the human's keys, the prompt row holding their command). It
// does not stop commands (the rows of the human's own typing were never
// kept from firing); it keeps the row out of OwnText.
const markHuman = markTyped << 1

// HumanTyping tells the scanner whether the human has an unfinished line:
// while it is true, every row the child prints on is the echo of what the
// human types, and OwnText leaves it out. The end of the human's line (in
// the order of the output) also ends the echo time of an injection that
// has ended: what the child prints now answers the human, and is its own.
func (s *Scanner) HumanTyping(on bool) {
	s.mu.Lock()
	s.waitable.Store(false)
	defer s.mu.Unlock()
	s.human = on
	if !on && s.inj.depth == 0 && !s.inj.end.IsZero() {
		s.inj = injection{}
	}
	s.scr.SetPrintMark(s.printMark())
}

// printMark is the mark of what is printed now: typed by relay, by the
// human, both or neither. Called with s.mu held.
func (s *Scanner) printMark() screen.Mark {
	var m screen.Mark
	if s.inj.depth > 0 || !s.inj.end.IsZero() {
		m |= markTyped
	}
	if s.human {
		m |= markHuman
	}
	return m
}

// OwnText returns the visible screen as Text does, with every row that
// relay or the human typed on (their echo, a prompt holding the typed
// command, relay's notices) left empty: what the agent itself wrote. The
// Output event reads it, so that a hook never sees relay's own text (and
// cannot loop on it) nor the human's keys.
func (s *Scanner) OwnText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb strings.Builder
	for _, l := range s.scr.Lines() {
		if l.Mark&(markTyped|markHuman) == 0 && !s.holdsInjected(l.Text) {
			sb.WriteString(l.Text)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// holdsInjected reports whether a row is, or holds, text relay typed: a
// part of it, or all of it after a prompt (a shell echoes typed text on
// its prompt row, which a slow scanner may see after the injection's
// marks ended). Called with s.mu held.
func (s *Scanner) holdsInjected(text string) bool {
	if strings.TrimSpace(text) == "" || len(s.injected) == 0 {
		return false
	}
	if s.isInjected(text) {
		return true
	}
	row := collapse(text)
	for _, in := range s.injected {
		if len(in.text) >= minInjected && strings.Contains(row, in.text) {
			return true
		}
	}
	return false
}

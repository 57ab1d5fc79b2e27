package scanner

import (
	"time"

	"github.com/relayhq/relay/internal/screen"
)

// Row marks (see screen.Mark): a marked row never starts or continues a
// command, wherever it scrolls to.
const (
	// markCut: the rest of a line whose start the scanner never saw. After
	// a reset of the screen model (bytes skipped, a resize, a switch of
	// screens in mid-line) the program goes on writing where it was, and
	// the rest of its line, drawn at column 0 of a blank row or after the
	// blanks of a fresh screen, would look like a line start. The mark
	// holds until the row is erased whole; the next line the program
	// starts (after a line feed or a cursor move) is read as usual.
	markCut screen.Mark = 1 << iota
	// markTyped: a row the child drew while relay typed into it (the echo
	// of the typed text, in a box or redrawn), see BeginInjection.
	markTyped
)

// injectEcho is how long after EndInjection rows the child draws still
// count as typed-in: the echo of the Enter (the prompt moved into the
// history, a redraw) comes within it. An agent's own reply usually takes
// longer; when it comes sooner, one of the child's own signals ends the
// echo first (see endInjection and HumanTyping).
const injectEcho = time.Second

// maxInjection ends an injection whose EndInjection never came.
const maxInjection = time.Minute

// injection is the state of the typing BeginInjection announced.
type injection struct {
	depth int       // BeginInjection calls not yet ended
	start time.Time // the outermost BeginInjection
	end   time.Time // the last EndInjection while depth is 0; zero when none waits
	seq   uint64    // counts outermost BeginInjection calls
	// busyAtEnd is whether a busy cue showed when the injection ended: a
	// cue that shows up only after it says the agent's turn has begun.
	busyAtEnd bool
}

// BeginInjection tells the scanner that the wrapper starts typing text into
// the child. From now until injectEcho after the matching EndInjection,
// every row the child prints on is typed-in text (the input box, the echo
// in a box, a redraw of the history): it never yields a command, also after
// it scrolls, until the child erases the row whole. text is remembered as
// by MarkInjected, so that a later redraw of it elsewhere does not fire
// either. Calls nest; each needs its EndInjection.
func (s *Scanner) BeginInjection(text string) {
	s.MarkInjected(text)
	s.mu.Lock()
	s.waitable.Store(false)
	defer s.mu.Unlock()
	if s.inj.depth == 0 {
		s.inj.start = s.now()
		s.inj.seq++
	}
	s.inj.depth++
	s.inj.end = time.Time{}
	s.scr.SetPrintMark(s.printMark())
	s.wake()
}

// EndInjection tells the scanner that the wrapper has written the last of
// an injection (its Enter). What the child prints in the next injectEcho
// (the echo of that Enter) still counts as typed-in. Call it even when the
// typing failed.
func (s *Scanner) EndInjection() {
	s.mu.Lock()
	s.waitable.Store(false)
	defer s.mu.Unlock()
	if s.inj.depth == 0 {
		return
	}
	s.inj.depth--
	if s.inj.depth == 0 {
		s.inj.end, s.inj.busyAtEnd = s.now(), s.hasBusyCue()
		s.wake()
	}
}

// Injection returns the number of the injection under way (0: none), for
// EndInjectionOf.
func (s *Scanner) Injection() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inj.depth == 0 {
		return 0
	}
	return s.inj.seq
}

// EndInjectionOf is EndInjection for injection n only: it does nothing when
// n has ended or another injection is under way. The session calls it in
// the order of the output (when the scanner reaches the bytes written with
// the Enter), so that what the child prints after the Enter is never taken
// for typed-in text, however late the typing goroutine gets to its own
// EndInjection.
func (s *Scanner) EndInjectionOf(n uint64) {
	s.mu.Lock()
	s.waitable.Store(false)
	defer s.mu.Unlock()
	if n == 0 || s.inj.seq != n || s.inj.depth == 0 {
		return
	}
	s.inj.depth = 0
	s.inj.end, s.inj.busyAtEnd = s.now(), s.hasBusyCue()
	s.wake()
}

// endInjection stops marking typed-in rows once the echo time has passed,
// or the agent has shown a busy cue since the Enter (its turn has begun:
// what it draws now is its reply, which a fast model starts well within
// the echo time), or the injection has gone on too long. A redraw of the
// typed text after that is still known by its text (MarkInjected).
func (s *Scanner) endInjection(now time.Time) {
	echo := injectEcho
	if s.cues.LineBreaksEnd {
		// A program that reads lines (a shell, a script) may answer the
		// moment the line reaches it: its answer is its own. Its echo of
		// the typed line is guarded by the text relay typed.
		echo = 0
	}
	switch {
	case s.inj.depth == 0 && !s.inj.end.IsZero() && (now.Sub(s.inj.end) >= echo || !s.inj.busyAtEnd && s.hasBusyCue()),
		s.inj.depth > 0 && now.Sub(s.inj.start) >= maxInjection:
		s.inj = injection{}
		s.scr.SetPrintMark(s.printMark()) // the human's mark, if they type
	}
}

// onAltScreen marks the rest of the line being written when the program
// switches screens in mid-row: on the fresh screen it would follow blanks.
func (s *Scanner) onAltScreen(bool) {
	s.epoch++
	if x, _ := s.scr.Cursor(); x > 0 {
		s.scr.MarkLine(markCut)
	}
}

package session

import (
	"cmp"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/procfs"
)

// A plain shell or REPL is typed into only while it waits at its own
// primary prompt (issue 30): relay's comment line is inert there, and
// there only. Two checks, made right before an injection that would go
// (delivery.Typist.Hold) and every 100 ms while messages wait, never on
// an idle wrapper:
//
//   - the child holds its terminal: the pty's foreground process group is
//     the child's own (it leads a session of its own). While the shell runs
//     vim, less or cat in the foreground, that program would read the text;
//     the message waits "held (the terminal is in use by PROGRAM)".
//   - its primary prompt is back: the cursor's row, left of the cursor,
//     shows the prompt learned when the shell was first idle, and nothing
//     is right of the cursor. A continuation prompt (bash's "> " inside an
//     open quote or a heredoc, Python's "... " inside an open """), a
//     `read -p` question or a password prompt is not it; the message waits
//     "held (an unfinished command)".
//
// A program that shows no prompt when it is first idle (a script reading
// lines) gets the first check only.

// Held reasons of a shell not at its own prompt.
const (
	heldInUse      = "the terminal is in use by "
	heldUnfinished = "an unfinished command: it goes in when the shell's prompt is back"
)

// primaryPrompt is a shell's primary prompt as learned from its screen.
type primaryPrompt struct {
	mu     sync.Mutex
	prompt string // the cursor row left of the cursor; "" while unknown
	// rightText: the row held text right of the cursor when the prompt was
	// learned (zsh's RPROMPT), so text there is the prompt's, not a line.
	rightText bool
	done      bool // learning is over: learned, or the human typed first
}

// learn notes the prompt from the cursor's row, at an idle moment before
// the human typed anything and before relay typed, or at the human's first
// key: what the shell shows then is its primary prompt. Once the human typed, what is on screen may
// be a continuation, and nothing more is learned (a program that showed
// no prompt till then gets no prompt check); once relay typed (stop), it
// may be relay's own echo.
func (p *primaryPrompt) learn(humanTyped bool, before, after string, alt bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.done:
	case humanTyped:
		p.done = true
	case alt || strings.TrimSpace(before) == "":
	default:
		p.prompt, p.rightText, p.done = before, after != "", true
	}
}

// stop ends learning: relay types now, and a screen that shows its echo
// must never be taken for a prompt.
func (p *primaryPrompt) stop() {
	p.mu.Lock()
	p.done = true
	p.mu.Unlock()
}

// atPrompt reports whether the cursor's row shows the primary prompt with
// nothing typed after it; true when no prompt is known.
func (p *primaryPrompt) atPrompt(before, after string, alt bool) bool {
	p.mu.Lock()
	prompt, rightText := p.prompt, p.rightText
	p.mu.Unlock()
	if prompt == "" {
		return true
	}
	if alt || (after != "" && !rightText) {
		return false
	}
	return samePrompt(prompt, before)
}

// samePrompt reports whether row (the cursor's row left of the cursor)
// is the primary prompt learned: the same text, the same text after
// output that did not end its line (after `read -s`, or printf without a
// line end, the prompt follows on the same row), or, for a prompt that
// shows changing parts (the working folder, the time), the same first
// character and the same last two ("$ ", ">>> " and ": " alike), with a
// length of at least three. A continuation prompt differs: bash's "> ",
// Python's "... ", IPython's "   ...: ", zsh's "quote> ". A primary prompt
// that reads like a continuation one ("> ") is told apart by its text only.
func samePrompt(prompt, row string) bool {
	if strings.HasSuffix(row, prompt) {
		return true
	}
	if utf8.RuneCountInString(prompt) < 3 || utf8.RuneCountInString(row) < 3 {
		return false
	}
	pf, _ := utf8.DecodeRuneInString(prompt)
	rf, _ := utf8.DecodeRuneInString(row)
	return pf == rf && lastRunes(prompt, 2) == lastRunes(row, 2)
}

// lastRunes returns the last n characters of s (s itself when shorter).
func lastRunes(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// learnPrompt learns a shell's primary prompt at an idle moment.
func (s *Session) learnPrompt() {
	if !s.shellReady() || s.child.scr == nil {
		return
	}
	before, after, alt := s.child.scr.CursorRow()
	s.typing.prompt.learn(!s.child.in.LastHuman().IsZero(), before, after, alt)
}

// learnPromptBeforeKey learns a shell's primary prompt from the screen
// as it was when the human's first key reached the shell (called in the
// order of the output, before the key's echo): the human cannot have left
// the shell anywhere else yet. It ends learning, prompt or not.
func (s *Session) learnPromptBeforeKey() {
	if !s.shellReady() || s.child.scr == nil {
		return
	}
	before, after, alt := s.child.scr.CursorRow()
	s.typing.prompt.learn(false, before, after, alt)
	s.typing.prompt.stop()
}

// shellHold says why a plain shell cannot be typed into now ("" when it
// waits at its own prompt): delivery.Typist.Hold.
func (s *Session) shellHold() string {
	if s.child.fg != nil {
		pg, err := s.child.fg()
		switch {
		case err != nil:
			s.log.Debug("foreground process group", "err", err)
		case pg != s.child.pid():
			return heldInUse + programName(pg)
		}
	}
	if !s.typing.prompt.atPrompt(s.child.scr.CursorRow()) {
		return heldUnfinished
	}
	return ""
}

// cleanPrompt reports whether the shell shows its primary prompt with an
// empty line: it holds its terminal, the cursor's row is the prompt and
// nothing is right of the cursor (a prompt learned with text there, zsh's
// RPROMPT, never says so).
func (s *Session) cleanPrompt() bool {
	if s.child.fg != nil {
		if pg, err := s.child.fg(); err != nil || pg != s.child.pid() {
			return false
		}
	}
	s.typing.prompt.mu.Lock()
	known := s.typing.prompt.prompt != "" && !s.typing.prompt.rightText
	s.typing.prompt.mu.Unlock()
	return known && s.typing.prompt.atPrompt(s.child.scr.CursorRow())
}

// releaseEvery is how often a shell's screen is looked at while the
// human's line is unfinished and messages wait.
const releaseEvery = 250 * time.Millisecond

// lineEmptyOnScreen returns how the screen shows that the human's line
// is empty, for releaseHumanLine: a shell's clean prompt, a model CLI's
// empty input box (when its profile reads the box); nil when the screen
// cannot say.
func (s *Session) lineEmptyOnScreen() func() bool {
	switch {
	case s.shellReady():
		return s.cleanPrompt
	case s.spec.prof.Cues.Prompt != "":
		return func() bool { return !s.child.scr.State().Draft }
	}
	return nil
}

// releaseHumanLine runs until ctx ends: while the human's line is
// unfinished, messages wait and the human has been quiet for HumanQuiet,
// it looks at the screen every releaseEvery, and once empty (from
// lineEmptyOnScreen) says so it takes the line for empty
// (wrapper.Input.ReleaseLine): keys relay could not count (an edit after
// Up, a q typed into less) must not hold the messages until the next
// Enter. It does nothing while the line is empty.
func (s *Session) releaseHumanLine(ctx context.Context, empty func() bool) {
	quiet := cmp.Or(s.cfg.HumanQuiet, delivery.DefaultHumanQuiet)
	s.typing.releaseLine(ctx, s.child.in, s.inbox.queue.Pending, quiet, empty, s.log)
}

// releaseLine is the release's goroutine (see releaseHumanLine): pending
// counts the messages waiting.
func (t *typingStage) releaseLine(ctx context.Context, in typist, pending func() int, quiet time.Duration, empty func() bool, log *slog.Logger) {
	tick := time.NewTicker(releaseEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.lineWake:
		}
		for t.humanLine.Load() {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if pending() == 0 || time.Since(in.LastHuman()) < quiet {
				continue
			}
			if in.ReleaseLine(empty) {
				log.Info("the human's line taken for empty: the screen shows it empty")
			}
		}
	}
}

// programName names the program of process group pgid (its leader's),
// for the held receipt.
func programName(pgid int) string {
	name, err := procfs.Comm(pgid)
	if err != nil || name == "" {
		return "another program"
	}
	return name
}

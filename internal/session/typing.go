package session

import (
	"cmp"
	"context"
	"errors"
	"github.com/relayhq/relay/internal/mailbox"
	"strings"
	"sync/atomic"
	"time"

	"github.com/relayhq/relay/internal/delivery"
)

// Bracketed paste markers: a TUI that enabled the mode takes what is
// between them as one paste, line breaks included, and never as keys.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// typingStage is what typing into the child keeps between two texts and
// what it learns of the child's input line. It is used by the goroutine
// that types (the delivery queue's, or stop's), by the owner and by the
// wrapper's callbacks, so each field is guarded on its own: atomics, the
// locks of prompt and ready, and the durations set before the stages
// start (tests shorten them).
type typingStage struct {
	// unshown: the input box did not show the last typed text before its
	// Enter, so an empty box does not confirm it.
	unshown atomic.Bool
	// late is the first line of a typed text confirm gave up on while
	// the input box still held it: a CLI that takes it late has not begun
	// its turn when its box is empty, and nothing is typed until its
	// record shows it (or promptWait passed).
	late atomic.Pointer[string]
	// promptWait is how long confirm waits for the CLI's record to show
	// the prompt; zero means promptWait. enterWait is how long confirm
	// looks at the input box after each Enter; zero means enterWait.
	promptWait, enterWait time.Duration
	// humanLine is the human's line as last notified (onHumanLine);
	// lineWake is a token, not a queue: "the line became unfinished", for
	// releaseHumanLine (shellstate.go).
	humanLine atomic.Bool
	lineWake  mailbox.Signal
	prompt    primaryPrompt // a shell's primary prompt (shellstate.go)
	// busyAt: unix nanoseconds when the agent was last seen busy (push,
	// the owner), for submitHold; submitWait bounds that hold (zero:
	// submitWait).
	busyAt     atomic.Int64
	submitWait time.Duration
	ready      readiness // a shell's readiness after an injection (ready.go)
}

func newTypingStage() typingStage { return typingStage{lineWake: mailbox.NewSignal()} }

// typeText types text into the agent through the wrapper's single writer:
// the text (as a bracketed paste when the agent enabled it), a wait for its
// input box to show it, a pause for the agent to take it, then Enter in a
// separate write.
func (s *Session) typeText(ctx context.Context, text string) error {
	return s.typeInjection(ctx, &delivery.Injection{Text: text})
}

// typeInjection is typeText for the delivery queue's injection: it commits
// it the moment the agent read the Enter.
func (s *Session) typeInjection(ctx context.Context, injection *delivery.Injection) error {
	// A text confirm gave up on, taken late: its turn comes first.
	if late := s.typing.late.Swap(nil); late != nil {
		if err := s.awaitPrompt(ctx, *late); err != nil {
			return err
		}
	}
	text := injection.Text
	paste := s.spec.prof.Paste && s.child.scr.BracketedPaste()
	if !paste {
		text = oneLine(text)
	}
	// What the child prints from now until relay's Enter is echoed is the
	// typed text, never the agent's own command.
	s.child.scr.BeginInjection(text)
	defer s.child.scr.EndInjection()
	inj := s.child.scr.Injection()
	ready := s.beforeTyping(injection, text)
	return s.child.in.Inject(func(write func([]byte) error) error {
		var err error
		if paste {
			// One paste, or several when the profile bounds a paste.
			for _, chunk := range s.spec.prof.PasteMax.Chunks(text) {
				if err = write([]byte(pasteStart + chunk + pasteEnd)); err != nil {
					break
				}
			}
		} else {
			err = write([]byte(text))
		}
		if err != nil {
			return err
		}
		// The pause counts from the input box showing the paste, not from
		// the write: Gemini CLI takes an Enter within 40 ms of reading a
		// paste for a newline, and on a loaded machine it reads (and draws)
		// the paste later than any pause from the write would cover.
		if err := s.waitShown(ctx, paste); err != nil {
			return err
		}
		if err := s.settle(ctx); err != nil {
			return err
		}
		if s.child.tap != nil {
			// The injection ends where its Enter is in the output: what
			// the child prints from there on (a shell's answer) is its
			// own, however late this goroutine gets to EndInjection.
			s.child.tap.Note(func() { s.child.scr.EndInjectionOf(inj) })
		}
		if err := write([]byte("\r")); err != nil {
			return err
		}
		s.hurryRecord()
		// Journaled the moment the child has read the Enter, not after
		// the bookkeeping that follows: a wrapper killed from here on
		// does not type the batch again, and one killed before types it
		// again (bytes the child has not read yet die with the terminal,
		// so that is at least once, never lost). A child that does not
		// read within readWait gets it journaled all the same.
		r, ok := s.child.in.(interface{ WaitRead(time.Duration) bool })
		read := ok && r.WaitRead(readWait)
		if ok && !read {
			s.log.Warn("typed text not read by the agent yet; counting it typed", "wait", readWait)
		}
		s.typedRead(read) // receipts.go: a shell's line read is seen
		injection.Commit()
		s.afterEnter(ready)
		return nil
	})
}

// settle gives a model CLI its profile's pause to take the typed text
// before the Enter (a TUI may take text and Enter read together for a
// paste). A plain shell gets none: its terminal's line discipline queues
// what it did not read yet, and the lines before the last one of a batch
// went in with their line breaks already; the Enter stays a write of its
// own. Nothing on the way from the hub to a shell's stdin waits on a timer.
func (s *Session) settle(ctx context.Context) error {
	if s.spec.prof.Settle <= 0 || s.shellReady() {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.spec.prof.Settle):
		return nil
	}
}

// typed logs which messages one injection held, in order.
func (s *Session) typed(batch []delivery.Item) {
	ids := make([]string, 0, len(batch))
	for _, it := range batch {
		if it.ID != "" {
			ids = append(ids, it.ID)
		}
	}
	s.log.Info("typed", "items", len(batch), "ids", strings.Join(ids, ","))
}

// readWait bounds how long typeText waits, after the Enter, for the agent
// to read what it typed before it journals it (see Input.WaitRead).
const readWait = 2 * time.Second

// pasteShowWait bounds how long typeText waits for the input box to show
// what it typed before it presses Enter all the same.
const pasteShowWait = 3 * time.Second

// waitShown waits until the agent's input box shows a draft (the text just
// typed: delivery types only into an empty box), for profiles whose input
// box the scanner can read. An Enter that arrives before a slow TUI drew
// the paste is ignored or taken for a newline (Codex starting under load
// left relay's primer in its box that way, and every message after it
// waited behind that "draft"), and confirm could then take the empty box
// it sees for text that was sent.
func (s *Session) waitShown(ctx context.Context, paste bool) error {
	if s.spec.prof.Cues.Prompt == "" {
		return nil
	}
	deadline := time.Now().Add(pasteShowWait)
	s.typing.unshown.Store(false)
	for !s.child.scr.State().Draft {
		if time.Now().After(deadline) {
			s.log.Warn("typed text not shown in the input box; pressing Enter all the same", "after", pasteShowWait, "paste", paste)
			s.typing.unshown.Store(true)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// errNotTaken is the reason a typed message was not confirmed.
var errNotTaken = errors.New("the agent did not take the message (it is not in a prompt, or the input box still holds it)")

// confirmer returns how to confirm a delivery for the agent's profile: nil
// when it has no input box to watch, so that "delivered" is all relay says.
func (s *Session) confirmer() func(context.Context, string) error {
	if !s.spec.prof.Model || s.spec.prof.Cues.Prompt == "" {
		return nil
	}
	return s.confirm
}

// turnsExact reports whether the exact source reports the agent's turns
// (and its prompts): Claude Code's hooks.
func (s *Session) turnsExact() bool {
	exact := false
	s.read(func(st *state) { exact = st.turn.Exact })
	return exact
}

// promptWait bounds how long confirm waits, once the input box took the
// text, for the CLI's own record (Codex's rollout, Gemini CLI's chat
// transcript) to show the prompt: the next text is not typed before.
const promptWait = 15 * time.Second

// awaitPrompt waits, for a CLI whose record reports prompts (not through
// hooks that report turns), until a prompt that reached the model holds
// first, at most s.typing.promptWait. An empty input box is not a turn begun: a
// loaded Gemini CLI took 12 s from the Enter to its model request, its
// screen idle all the while, and relay typed the next message in; Gemini
// CLI sent the two out of order and then showed "Thinking…" for good,
// with no request left (TestThreeCLIs' relay send --wait answered). Past
// the bound (no record, or one that never shows prompts) typing goes on.
func (s *Session) awaitPrompt(ctx context.Context, first string) error {
	if !s.recordsPrompts() || s.promptHas(first) {
		return nil
	}
	wait := cmp.Or(s.typing.promptWait, promptWait)
	if err := s.waitPrompt(ctx, first, wait); errors.Is(err, errNoPrompt) {
		s.log.Info("typed text taken, but the CLI's record does not show it yet; typing goes on", "after", wait)
	} else if err != nil {
		return err
	}
	return nil
}

// recordsPrompts reports whether the CLI's own record (Codex's rollout,
// Gemini CLI's chat transcript) shows its prompts, and hooks do not report
// its turns.
func (s *Session) recordsPrompts() bool { return s.spec.src != nil && !s.turnsExact() }

// enterWait is how long confirm looks at the input box after each Enter
// before it presses Enter again.
const enterWait = 3 * time.Second

// confirmEnters is how many times confirm presses Enter again while the
// typed text stays in the input box: a TUI still starting (Codex under
// load) or slow to read a paste ignores an Enter or takes it for a newline.
const confirmEnters = 3

// confirm checks that the agent took what was typed: with Claude Code's
// hooks, its first line (the sender and message id) is in a prompt that
// reached the model; else its input box holds no draft any more. If not,
// Enter is pressed again (up to confirmEnters times, enterWait apart),
// unless the human has typed since: that Enter would send their text with
// ours. A CLI whose record shows its prompts may read its input late
// (Gemini CLI under load): after the last Enter confirm watches its box
// and record on, without another Enter, up to promptWait; if it gives up
// with the text still in the box, the next text waits for the record to
// show this one (typeText), so that it is never typed on top of a turn
// the CLI has not begun.
func (s *Session) confirm(ctx context.Context, text string) error {
	first, _, _ := strings.Cut(text, "\n")
	// A TUI still starting (Claude Code under load) may draw the paste
	// only after relay's Enter, which it then missed: until the box has
	// shown the text, its being empty proves nothing.
	unshown := s.typing.unshown.Load()
	taken := func() bool {
		if s.exactActive() && s.promptHas(first) {
			return true // the exact text shows the prompt
		}
		if s.turnsExact() {
			return false // the hooks report prompts: the screen does not count
		}
		draft := s.child.scr.State().Draft
		if unshown {
			unshown = !draft
			return false
		}
		return !draft
	}
	typed := time.Now()
	for try := 0; ; try++ {
		look := cmp.Or(s.typing.enterWait, enterWait)
		if try == confirmEnters && s.recordsPrompts() {
			look = cmp.Or(s.typing.promptWait, promptWait)
		}
		deadline := time.Now().Add(look)
		for time.Now().Before(deadline) {
			if taken() {
				if try > 0 {
					s.log.Info("typed text taken after another Enter", "enters", try+1, "after", time.Since(typed).Round(time.Millisecond))
				}
				return s.awaitPrompt(ctx, first)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		if try == confirmEnters {
			break
		}
		if s.child.in.LastHuman().After(typed) {
			s.log.Warn("typed text not taken, and the human is typing: no more Enter", "text", first)
			return errNotTaken
		}
		s.child.scr.BeginInjection("")
		_ = s.child.in.Inject(func(write func([]byte) error) error { return write([]byte("\r")) })
		s.child.scr.EndInjection()
	}
	// The text is still in the box, or it never showed there (a CLI that
	// drew its box before it read it holds the text unread): the CLI may
	// take it yet.
	if s.recordsPrompts() && (unshown || s.child.scr.State().Draft) {
		s.typing.late.Store(&first)
	}
	s.log.Warn("typed text not taken", "text", first, "enters", confirmEnters+1)
	return errNotTaken
}

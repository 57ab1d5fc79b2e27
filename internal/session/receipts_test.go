package session

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/scanner"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// lostEnterBox is a model CLI's input box that swallows the first Enter
// after a paste (a TUI still drawing it): the paste stays in the box. The
// next Enter submits it, and the CLI's record then shows the prompt.
type lostEnterBox struct {
	fakeScreen
	s *Session

	mu             sync.Mutex
	box            string // what the input box holds
	pastes, enters int
}

func (b *lostEnterBox) BracketedPaste() bool         { return true }
func (b *lostEnterBox) ReleaseLine(func() bool) bool { return false }
func (b *lostEnterBox) LastHuman() time.Time         { return time.Time{} }
func (b *lostEnterBox) State() scanner.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return scanner.State{Draft: b.box != ""}
}
func (b *lostEnterBox) Inject(fn func(write func([]byte) error) error) error {
	return fn(func(p []byte) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch text := string(p); {
		case strings.HasPrefix(text, pasteStart):
			b.pastes++
			b.box = strings.TrimSuffix(strings.TrimPrefix(text, pasteStart), pasteEnd)
		case text == "\r":
			b.enters++
			if b.enters > 1 && b.box != "" { // the first one is lost
				b.s.prompted([]string{b.box})
				b.box = ""
			}
		}
		return nil
	})
}

// recordSource is an exact source that is active and gives no commands:
// the prompts come from the box, as a CLI's record would show them.
type recordSource struct{}

func (recordSource) Run(ctx context.Context, _ agents.Sink) error { <-ctx.Done(); return nil }
func (recordSource) Screen(patterns.Command) bool                 { return false }
func (recordSource) Active() bool                                 { return true }
func (recordSource) Idle()                                        {}

// TestLostEnterSeenAfterResubmit: a paste whose Enter the CLI swallowed
// is not seen; relay presses Enter again (never pastes the text twice),
// and once the CLI's record shows the prompt the message is seen.
func TestLostEnterSeenAfterResubmit(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newSession(ctx, Config{Name: "Bob", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	box := &lostEnterBox{s: s}
	s.spec.prof = agents.Profile{Model: true, Paste: true, Cues: scanner.Cues{Prompt: ">"}}
	s.child.scr, s.child.in, s.spec.src = box, box, recordSource{}
	const text = "[relay] Message from agent Alice (id m1). To answer, write a line starting with @relay:Alice\n│ run the tests"
	if err := s.typeText(ctx, text); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(text, "\n")
	if why, ok := s.seenNow(first); ok {
		t.Fatalf("seen (%s) before the lost Enter was pressed again", why)
	}
	if err := s.confirm(ctx, text); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	why, ok := s.seenNow(first)
	if !ok || why != seenInPrompt {
		t.Fatalf("seen %v (%s) after the resubmit, want seen %s", ok, why, seenInPrompt)
	}
	box.mu.Lock()
	defer box.mu.Unlock()
	if box.pastes != 1 || box.enters != 2 {
		t.Errorf("%d pastes, %d Enters; want the text typed once and Enter pressed twice", box.pastes, box.enters)
	}
}

// slowTurnBox is a model CLI's input box that takes a paste on its Enter
// (the box is empty at once) while its record shows the prompt only when
// the CLI starts the turn: later (show), or never.
type slowTurnBox struct {
	lostEnterBox
	taken chan string // the text the Enter took
}

func (b *slowTurnBox) Inject(fn func(write func([]byte) error) error) error {
	return fn(func(p []byte) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch text := string(p); {
		case strings.HasPrefix(text, pasteStart):
			b.pastes++
			b.box = strings.TrimSuffix(strings.TrimPrefix(text, pasteStart), pasteEnd)
		case text == "\r":
			b.enters++
			if b.box != "" {
				b.taken <- b.box
				b.box = ""
			}
		}
		return nil
	})
}

// TestConfirmWaitsForTheTurn: an input box that took the text is not yet
// a turn begun. confirm returns once the CLI's record shows the prompt,
// so that the next message is not typed into a CLI that has not started
// the last one (a loaded Gemini CLI answered two such prompts out of order
// and stayed "Thinking…"); a record that never shows it holds typing
// up for the bound only.
func TestConfirmWaitsForTheTurn(t *testing.T) {
	const text = "[relay] Message from agent Alice (id m1). To answer, write a line starting with @relay:Alice\n│ run the tests"
	for _, tc := range []struct {
		name  string
		shown bool // the record shows the prompt
	}{{"prompt recorded later", true}, {"never recorded", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newSession(ctx, Config{Name: "Bob", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			box := &slowTurnBox{lostEnterBox: lostEnterBox{s: s}, taken: make(chan string, 1)}
			s.spec.prof = agents.Profile{Model: true, Paste: true, Cues: scanner.Cues{Prompt: ">"}}
			s.child.scr, s.child.in, s.spec.src = box, box, recordSource{}
			s.typing.promptWait = time.Hour
			if !tc.shown {
				s.typing.promptWait = 300 * time.Millisecond
			}
			if err := s.typeText(ctx, text); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.confirm(ctx, text) }()
			prompt := <-box.taken
			if !tc.shown {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("confirm: %v, want nil past the bound", err)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("confirm still waits long past its bound")
				}
				return
			}
			// The box is empty; confirm waits for the record, which the
			// CLI writes only now (a second is far more than confirm's
			// 50 ms look at the box takes: the old confirm returned).
			select {
			case err := <-done:
				t.Fatalf("confirm returned (%v) before the CLI's record showed the prompt", err)
			case <-time.After(time.Second):
			}
			s.prompted([]string{prompt})
			if err := <-done; err != nil {
				t.Fatalf("confirm: %v", err)
			}
			box.mu.Lock()
			defer box.mu.Unlock()
			if box.pastes != 1 || box.enters != 1 {
				t.Errorf("%d pastes, %d Enters; want one of each", box.pastes, box.enters)
			}
		})
	}
}

// lateBox is a model CLI's input box that reads nothing until released
// (Gemini CLI under load read its input many seconds late): the paste
// stays in the box through every Enter; released, it takes what its box
// holds (the Enters were queued) and then takes each paste on its Enter.
// Its record shows a prompt only when the test says so.
type lateBox struct {
	lostEnterBox
	released bool
	hidden   bool // the box does not show the paste until released
}

func (b *lateBox) State() scanner.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return scanner.State{Draft: b.box != "" && !b.hidden}
}

func (b *lateBox) Inject(fn func(write func([]byte) error) error) error {
	return fn(func(p []byte) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch text := string(p); {
		case strings.HasPrefix(text, pasteStart):
			b.pastes++
			b.box = strings.TrimSuffix(strings.TrimPrefix(text, pasteStart), pasteEnd)
		case text == "\r":
			b.enters++
			if b.released {
				b.box = ""
			}
		}
		return nil
	})
}

// release has the box read its input at last.
func (b *lateBox) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.released, b.hidden, b.box = true, false, ""
}

func (b *lateBox) counts() (pastes, enters int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pastes, b.enters
}

// TestConfirmLateTaker: a CLI that reads its input only after all of
// confirm's Enters (a Gemini CLI under heavy load) must not get the next
// message before its record shows the first one's prompt. confirm watches
// on after its last Enter and returns once the record shows it; and if it
// gave up with the text still in the box, the next text is typed only
// after the record shows the first. Each case failed on the confirm that
// gave up after its fourth Enter; the last one, a box that never showed
// the text (Gemini CLI under load drew its box before it read it), also
// on the confirm that left the next text alone when the box was empty.
func TestConfirmLateTaker(t *testing.T) {
	const text = "[relay] Message from agent Alice (id m1). To answer, write a line starting with @relay:Alice\n│ run the tests"
	const next = "[relay] Message from agent Alice (id m2). To answer, write a line starting with @relay:Alice\n│ and the linter"
	first, _, _ := strings.Cut(text, "\n")
	for _, tc := range []struct {
		name   string
		giveUp bool // confirm gives up before the box takes the text
		hidden bool // the box never showed the text before
	}{
		{"taken after the last Enter", false, false},
		{"taken after confirm gave up", true, false},
		{"never shown, taken after confirm gave up", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newSession(ctx, Config{Name: "Bob", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			box := &lateBox{lostEnterBox: lostEnterBox{s: s}, hidden: tc.hidden}
			s.spec.prof = agents.Profile{Model: true, Paste: true, Cues: scanner.Cues{Prompt: ">"}}
			s.child.scr, s.child.in, s.spec.src = box, box, recordSource{}
			s.typing.enterWait, s.typing.promptWait = 10*time.Millisecond, time.Hour
			if tc.giveUp {
				s.typing.promptWait = 10 * time.Millisecond
			}
			if err := s.typeText(ctx, text); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- s.confirm(ctx, text) }()
			if tc.giveUp {
				if err := <-done; err == nil {
					t.Fatal("confirm: nil, want not taken (the box still holds the text)")
				}
				box.release()
				s.typing.promptWait = time.Hour // the next text's wait
				go func() { done <- s.typeText(ctx, next) }()
			} else {
				testutil.Eventually(t, func() error {
					if _, enters := box.counts(); enters < 1+confirmEnters {
						return fmt.Errorf("%d Enters, want %d", enters, 1+confirmEnters)
					}
					return nil
				})
				box.release()
			}
			// The box is empty, the CLI's turn not begun: nothing may
			// return yet (a second is far more than the 10 ms looks).
			select {
			case err := <-done:
				pastes, _ := box.counts()
				t.Fatalf("returned (%v, %d pastes) before the CLI's record showed the first prompt", err, pastes)
			case <-time.After(time.Second):
			}
			if pastes, _ := box.counts(); pastes != 1 {
				t.Fatalf("%d pastes before the first prompt was recorded, want 1", pastes)
			}
			s.prompted([]string{text})
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if why, ok := s.seenNow(first); !ok && !tc.giveUp {
				t.Errorf("not seen (%s) once the record showed the prompt", why)
			}
			pastes, enters := box.counts()
			if want := 1 + btoi(tc.giveUp); pastes != want || enters != 1+confirmEnters+btoi(tc.giveUp) {
				t.Errorf("%d pastes, %d Enters; want %d and %d", pastes, enters, want, 1+confirmEnters+btoi(tc.giveUp))
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

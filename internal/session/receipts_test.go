package session

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/agents"
	"github.com/relayhq/relay/patterns"
	"github.com/relayhq/relay/scanner"
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
	s.prof = agents.Profile{Model: true, Paste: true, Cues: scanner.Cues{Prompt: ">"}}
	s.scr, s.in, s.src = box, box, recordSource{}
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
			s.prof = agents.Profile{Model: true, Paste: true, Cues: scanner.Cues{Prompt: ">"}}
			s.scr, s.in, s.src = box, box, recordSource{}
			s.promptWait = time.Hour
			if !tc.shown {
				s.promptWait = 300 * time.Millisecond
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

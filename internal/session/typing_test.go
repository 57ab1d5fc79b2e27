package session

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/scanner"
)

// slowBox is an agent's screen whose input box shows a paste only `after`
// its write (a TUI reading and drawing it late on a loaded machine); it
// records when the paste and the Enter were written.
type slowBox struct {
	fakeScreen
	after time.Duration

	mu           sync.Mutex
	pasted, sent time.Time
}

func (b *slowBox) BracketedPaste() bool         { return true }
func (b *slowBox) ReleaseLine(func() bool) bool { return false }
func (b *slowBox) State() scanner.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return scanner.State{Draft: !b.pasted.IsZero() && time.Since(b.pasted) >= b.after}
}
func (b *slowBox) Inject(fn func(write func([]byte) error) error) error {
	return fn(func(p []byte) error {
		b.mu.Lock()
		defer b.mu.Unlock()
		if strings.HasPrefix(string(p), pasteStart) {
			b.pasted = time.Now()
		} else if string(p) == "\r" {
			b.sent = time.Now()
		}
		return nil
	})
}
func (b *slowBox) LastHuman() time.Time { return time.Time{} }

// TestSettleCountsFromShownPaste: the pause before the Enter counts from
// the input box showing the paste, not from its write. Gemini CLI takes an
// Enter within 40 ms of reading a paste for a newline, and under load it
// draws the paste (just after reading it) later than a pause from the
// write covers: the Enter must still come a whole Settle after the draw.
func TestSettleCountsFromShownPaste(t *testing.T) {
	const settle = 50 * time.Millisecond
	box := &slowBox{after: 80 * time.Millisecond}
	prof := agents.Profile{Model: true, Paste: true, Settle: settle, Cues: scanner.Cues{Prompt: ">"}}
	s := &Session{spec: spec{prof: prof}, child: child{scr: box, in: box}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := s.typeText(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	box.mu.Lock()
	defer box.mu.Unlock()
	if box.sent.IsZero() {
		t.Fatal("no Enter was written")
	}
	if got := box.sent.Sub(box.pasted) - box.after; got < settle {
		t.Fatalf("Enter %v after the box showed the paste; want at least Settle (%v)", got.Round(time.Millisecond), settle)
	}
}

package gemini_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/agents/gemini"
	"github.com/relayhq/relay/internal/agenttest"
	"github.com/relayhq/relay/internal/mockmodel"
)

var settleOverride = flag.Duration("gemini-settle", 0, "TestGeminiEnterAfterPasteRealCLI: the pause to try instead of the profile's Settle (to measure)")

// TestGeminiEnterAfterPasteRealCLI: relay types into Gemini CLI as a
// bracketed paste, waits until its input box shows the paste, pauses the
// profile's Settle and presses Enter once (as session.typeText does).
// Gemini CLI takes an Enter that comes within 40 ms of its reading the
// paste (plus its timer's lag and a React re-render) for a newline, and it
// may draw the paste only just after reading it, late on a loaded machine:
// the pause must count from the box showing the paste. The one Enter must
// submit every time, for one line and for a batch of 30 (drawn as
// "[Pasted Text: 31 lines]"), including the first prompt right after
// start-up. An Enter taken for a newline would
// leave the message in the box until relay's confirm presses Enter again,
// 3 s later.
func TestGeminiEnterAfterPasteRealCLI(t *testing.T) {
	m := mockmodel.NewGemini(mockmodel.Options{})
	t.Cleanup(m.Close)
	term := agenttest.Start(t, agenttest.Gemini(t, agenttest.GeminiOptions{Model: m.URL}))
	if _, err := term.WaitReady(60*time.Second, agenttest.GeminiReady); err != nil {
		t.Fatalf("Gemini CLI not ready: %v", err)
	}
	settle := gemini.Profile().Settle
	if *settleOverride > 0 {
		settle = *settleOverride
	}
	for i := range 12 {
		first := fmt.Sprintf("paste then enter %d", i)
		text, shown := first, []byte(first)
		if i%2 == 1 {
			// A batch of messages is a longer paste, over several lines,
			// that Gemini CLI draws as a placeholder.
			text += strings.Repeat("\n[from Alice, id 01JXYZ] the build on main is green again, please rebase onto it.", 30)
			shown = []byte("[Pasted Text: 31 lines]")
		}
		from := term.OutputLen()
		wrote := time.Now()
		term.Paste(text)
		if err := term.WaitFor(10*time.Second, func(raw []byte) bool { return bytes.Contains(raw[from:], shown) }); err != nil {
			t.Fatalf("round %d: Gemini CLI did not show the paste in its input box: %v", i, err)
		}
		drawn := time.Since(wrote)
		time.Sleep(settle)
		term.Enter()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := m.WaitForRequest(ctx, first)
		cancel()
		if err != nil {
			t.Fatalf("round %d: one Enter %v after the box showed the paste (%v after the write) did not submit it: %v\nscreen:\n%s",
				i, settle, drawn.Round(time.Millisecond), err, agenttest.TmuxScreen(t, term.Raw(), 100, 30))
		}
		if !strings.HasSuffix(req.LastUser, text) {
			t.Fatalf("round %d: the model got %q, want it to end with the paste, no newline added", i, req.LastUser)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		_, err = m.WaitReplied(ctx, req.Turn)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := term.WaitReady(60*time.Second, agenttest.GeminiReady); err != nil {
			t.Fatalf("round %d: Gemini CLI not idle again: %v", i, err)
		}
		t.Logf("round %d: paste shown in the box %v after the write; Enter %v later", i, drawn.Round(time.Millisecond), settle)
	}
}

package codex_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/codex"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestCodexEnterAfterPasteRealCLI: relay types into Codex as a bracketed
// paste, waits until Codex's input box shows it, pauses the profile's
// Settle and presses Enter once. The real Codex takes that one Enter as the
// submit every time, even when it comes right after Codex's first redraw
// after the paste (earlier than relay's wait for the box to show the text
// ends): an Enter dropped or taken for a newline would leave the message in
// the box until relay's confirm presses Enter again, 3 s later. The
// profile's short Settle rests on this, for one line and for a batch of 30.
func TestCodexEnterAfterPasteRealCLI(t *testing.T) {
	m := mockmodel.NewResponses(mockmodel.Options{})
	t.Cleanup(m.Close)
	term := agenttest.Start(t, agenttest.Codex(t, agenttest.CodexOptions{Model: m.URL}))
	if _, err := term.WaitReady(60*time.Second, agenttest.CodexReady); err != nil {
		t.Fatalf("Codex not ready: %v", err)
	}
	settle := codex.Profile().Settle
	for i := range 10 {
		text := fmt.Sprintf("paste then enter %d", i)
		if i%2 == 1 {
			// A batch of messages is a longer paste, over several lines.
			text += strings.Repeat("\n[from Alice, id 01JXYZ] the build on main is green again, please rebase onto it.", 30)
		}
		from := term.OutputLen()
		term.Paste(text)
		if err := term.WaitFor(10*time.Second, func(raw []byte) bool { return len(raw) > from }); err != nil {
			t.Fatalf("round %d: Codex did not redraw after the paste: %v", i, err)
		}
		time.Sleep(settle)
		term.Enter()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := m.WaitForRequest(ctx, fmt.Sprintf("paste then enter %d", i))
		cancel()
		if err != nil {
			t.Fatalf("round %d: one Enter %v after the paste was drawn did not submit it: %v\nscreen:\n%s",
				i, settle, err, agenttest.TmuxScreen(t, term.Raw(), 100, 30))
		}
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		_, err = m.WaitReplied(ctx, req.Turn)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := term.WaitReady(60*time.Second, agenttest.CodexReady); err != nil {
			t.Fatalf("round %d: Codex not idle again: %v", i, err)
		}
	}
}

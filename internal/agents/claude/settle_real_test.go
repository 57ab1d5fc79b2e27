package claude_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/claude"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestClaudeEnterAfterPasteRealCLI: relay types into Claude Code as a
// bracketed paste, waits until its input box shows it, pauses the
// profile's Settle and presses Enter once. The real Claude Code takes that
// one Enter as the submit every time, even when it comes right after its
// first redraw after the paste (earlier than relay's wait for the box to
// show the text ends): an Enter dropped or taken for a newline would leave
// the message in the box until relay's confirm presses Enter again, 3 s
// later: the test does the same and logs how many rounds needed it. The
// profile's short Settle rests on this, for one line and for a batch of
// 30; it is measured, since a loaded machine can delay any CLI past it,
// and what is asserted is that every paste reaches the model.
func TestClaudeEnterAfterPasteRealCLI(t *testing.T) {
	agenttest.Binary(t, "claude")
	m := mockmodel.NewAnthropic(mockmodel.Options{})
	t.Cleanup(m.Close)
	term := agenttest.Start(t, agenttest.Claude(t, agenttest.ClaudeOptions{Model: m.URL, Cols: 100, Rows: 30}))
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		t.Fatalf("Claude Code not ready: %v", err)
	}
	settle := claude.Profile().Settle
	seconds := 0 // rounds that needed relay's second Enter
	defer func() { t.Logf("%d of 10 rounds needed a second Enter", seconds) }()
	for i := range 10 {
		text := fmt.Sprintf("paste then enter %d", i)
		if i%2 == 1 {
			// A batch of messages is a longer paste, over several lines.
			text += strings.Repeat("\n[from Alice, id 01JXYZ] the build on main is green again, please rebase onto it.", 30)
		}
		from := term.OutputLen()
		term.Paste(text)
		if err := term.WaitFor(10*time.Second, func(raw []byte) bool { return len(raw) > from }); err != nil {
			t.Fatalf("round %d: Claude Code did not redraw after the paste: %v", i, err)
		}
		time.Sleep(settle)
		term.Enter()
		first := fmt.Sprintf("paste then enter %d", i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := m.WaitForRequest(ctx, first)
		cancel()
		if err != nil {
			// Not within 5 s: relay's confirm would press Enter again.
			seconds++
			t.Logf("round %d: the one Enter did not submit within 5s; pressing it again", i)
			term.Enter()
			ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
			req, err = m.WaitForRequest(ctx, first)
			cancel()
		}
		if err != nil {
			t.Fatalf("round %d: neither one Enter %v after the paste was drawn nor a second one submitted it: %v\nscreen:\n%s",
				i, settle, err, agenttest.TmuxScreen(t, term.Raw(), 100, 30))
		}
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		_, err = m.WaitReplied(ctx, req.Turn)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
			t.Fatalf("round %d: Claude Code not idle again: %v", i, err)
		}
	}
}

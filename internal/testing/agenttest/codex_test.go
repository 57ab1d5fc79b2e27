package agenttest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestCodexSmoke starts the real Codex against the mock Responses server,
// submits a prompt by paste + Enter, and waits for the model request and
// for the reply on the tmux-rendered screen. Codex names the thread with a
// second request after the first turn: it must not count as a turn.
func TestCodexSmoke(t *testing.T) {
	m := mockmodel.NewResponses(mockmodel.Options{Script: mockmodel.Fixed("Hello from the mock model, all good.")})
	t.Cleanup(m.Close)
	cmd := agenttest.Codex(t, agenttest.CodexOptions{Model: m.URL, Cols: 100, Rows: 30})
	start := time.Now()
	term := agenttest.Start(t, cmd)
	if _, err := term.WaitReady(60*time.Second, agenttest.CodexReady); err != nil {
		t.Fatalf("Codex never became ready: %v", err)
	}
	t.Logf("ready after %v", time.Since(start).Round(time.Millisecond))
	enters, err := term.SubmitConfirm("say hello", 0, 20*time.Second, func() bool { return m.Count("say hello") > 0 })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prompt reached the model after %v (%d Enter)", time.Since(start).Round(time.Millisecond), enters)
	if _, err := term.WaitScreen(30*time.Second, func(s string) bool {
		return strings.Contains(s, "Hello from the mock model, all good.") && strings.Contains(s, "Worked for")
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("reply on screen after %v", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := m.WaitFor(ctx, func(r mockmodel.Request) bool { return r.Kind == "title" }, "the title request"); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Turns()); n != 1 {
		t.Errorf("model turns = %d, want 1 (the title request is not a turn)", n)
	}
}

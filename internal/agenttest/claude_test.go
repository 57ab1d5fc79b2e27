package agenttest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agenttest"
	"github.com/relayhq/relay/internal/mockmodel"
)

// TestClaudeSmoke starts the real Claude Code against the mock, submits a
// prompt by paste + Enter, and waits for the model request and for the
// reply on the tmux-rendered screen. The first reply runs a Bash tool call,
// so the run also proves the tool round trip of issue 9.
func TestClaudeSmoke(t *testing.T) {
	for _, renderer := range []string{"fullscreen", "classic"} {
		t.Run(renderer, func(t *testing.T) {
			m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
				mockmodel.Reply{Text: "Checking first.", ToolUse: &mockmodel.ToolUse{Name: "Bash",
					Input: map[string]any{"command": "true", "description": "Run true"}}},
				mockmodel.Reply{Text: "Hello from the mock model, all good."},
			)})
			t.Cleanup(m.Close)
			cmd := agenttest.Claude(t, agenttest.ClaudeOptions{Model: m.URL, Cols: 100, Rows: 30, Renderer: renderer})
			start := time.Now()
			term := agenttest.Start(t, cmd)
			if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
				t.Fatalf("Claude Code never became ready: %v", err)
			}
			t.Logf("ready after %v", time.Since(start).Round(time.Millisecond))

			enters, err := term.SubmitConfirm("say hello", 0, 20*time.Second, func() bool { return m.Count("say hello") > 0 })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("prompt reached the model after %v (%d Enter)", time.Since(start).Round(time.Millisecond), enters)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := m.WaitForRequest(ctx, "Bash completed"); err != nil {
				t.Fatalf("the tool result never came back: %v", err)
			}
			screen, err := term.WaitScreen(30*time.Second, func(s string) bool {
				return strings.Contains(s, "Hello from the mock model, all good.") && agenttest.ClaudeReady(s)
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("reply on screen after %v", time.Since(start).Round(time.Millisecond))
			if n := m.Count("say hello"); n != 1 {
				t.Errorf("the prompt reached the model %d times, want 1", n)
			}
			if n := len(m.Turns()); n != 2 {
				t.Errorf("model turns = %d, want 2 (prompt, tool result)", n)
			}
			if !strings.Contains(screen, "Checking first.") {
				t.Errorf("the text before the tool call is not on screen:\n%s", screen)
			}
		})
	}
}

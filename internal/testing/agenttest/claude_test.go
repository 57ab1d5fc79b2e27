package agenttest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
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

// TestClaudePermissionPrompt shows how a test gets Claude Code to wait on
// the human: in the default permission mode a Bash tool call waits for
// approval, and the tool result reaches the model only once it is given.
func TestClaudePermissionPrompt(t *testing.T) {
	m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "Creating the marker.", ToolUse: &mockmodel.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "touch marker", "description": "Create the marker"}}},
		mockmodel.Reply{Text: "The marker exists."},
	)})
	t.Cleanup(m.Close)
	work := t.TempDir()
	cmd := agenttest.Claude(t, agenttest.ClaudeOptions{Model: m.URL, WorkDir: work, ExtraArgs: []string{"--permission-mode", "default"}})
	term := agenttest.Start(t, cmd)
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		t.Fatal(err)
	}
	if _, err := term.SubmitConfirm("make the marker", 0, 20*time.Second, func() bool { return m.Count("make the marker") > 0 }); err != nil {
		t.Fatal(err)
	}
	// The dialog takes keys only once it has settled: wait for quiet.
	if _, err := term.WaitReady(30*time.Second, agenttest.ClaudePermissionPrompt); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Turns()); n != 1 {
		t.Fatalf("the tool ran before it was approved: %d turns", n)
	}
	term.Enter() // "1. Yes" is selected
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.WaitReplied(ctx, 2); err != nil {
		t.Fatalf("no model turn after the approval: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "marker")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	if _, err := term.WaitScreen(30*time.Second, func(s string) bool {
		return strings.Contains(s, "The marker exists.") && agenttest.ClaudeReady(s)
	}); err != nil {
		t.Fatal(err)
	}
}

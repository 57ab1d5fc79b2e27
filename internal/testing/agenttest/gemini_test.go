package agenttest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestGeminiSmoke starts the real Gemini CLI against the mock Gemini
// server, submits a prompt by paste + Enter, and waits for the model
// request and for the reply on the tmux-rendered screen.
func TestGeminiSmoke(t *testing.T) {
	m := mockmodel.NewGemini(mockmodel.Options{Script: mockmodel.Fixed("Hello from the mock model, all good.")})
	t.Cleanup(m.Close)
	cmd := agenttest.Gemini(t, agenttest.GeminiOptions{Model: m.URL, Cols: 100, Rows: 30})
	start := time.Now()
	term := agenttest.Start(t, cmd)
	if _, err := term.WaitReady(60*time.Second, agenttest.GeminiReady); err != nil {
		t.Fatalf("Gemini CLI never became ready: %v", err)
	}
	t.Logf("ready after %v", time.Since(start).Round(time.Millisecond))
	enters, err := term.SubmitConfirm("say hello", 300*time.Millisecond, 20*time.Second, func() bool { return m.Count("say hello") > 0 })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prompt reached the model after %v (%d Enter)", time.Since(start).Round(time.Millisecond), enters)
	if _, err := term.WaitScreen(30*time.Second, func(s string) bool {
		return strings.Contains(s, "Hello from the mock model, all good.") && agenttest.GeminiReady(s)
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("reply on screen after %v", time.Since(start).Round(time.Millisecond))
	if n := len(m.Turns()); n != 1 {
		t.Errorf("model turns = %d, want 1", n)
	}
}

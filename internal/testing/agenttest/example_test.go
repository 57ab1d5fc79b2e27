package agenttest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// The shape of an end-to-end test: a mock model, the real CLI in a
// pseudo-terminal (here under a wrapper such as `relay wrap`), a prompt
// typed the way a human would, and assertions on what reached the model
// and what is on screen.
func Example() {
	var t testing.TB // the test's *testing.T
	m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "@relay:Bob Please rebase onto main."},
	)})
	t.Cleanup(m.Close)

	cmd := agenttest.Claude(t, agenttest.ClaudeOptions{Model: m.URL, Cols: 100, Rows: 30})
	cmd = cmd.Under("/path/to/relay", "wrap", "--name", "Alice", "--")
	term := agenttest.Start(t, cmd)
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		t.Fatal(err)
	}
	if _, err := term.SubmitConfirm("ask Bob to rebase", 0, 20*time.Second,
		func() bool { return m.Count("ask Bob to rebase") > 0 }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.WaitReplied(ctx, 1); err != nil {
		t.Fatal(err)
	}
	screen, err := term.WaitScreen(30*time.Second, func(s string) bool { return strings.Contains(s, "rebase onto main") })
	fmt.Println(screen, err)
}

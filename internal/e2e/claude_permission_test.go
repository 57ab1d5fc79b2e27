package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// claudeAsking is tm.claude with Claude Code in its default permission
// mode, where every Bash tool call waits for the human's approval (2.1.328
// starts in auto mode, which runs harmless commands at once), working in
// the folder work.
func (tm *team) claudeAsking(name, work string, script mockmodel.Script) *claudeAgent {
	tm.t.Helper()
	model := mockmodel.NewAnthropic(mockmodel.Options{Script: script})
	tm.t.Cleanup(model.Close)
	env := relayVars(tm.env)
	cmd := agenttest.Claude(tm.t, agenttest.ClaudeOptions{Model: model.URL, WorkDir: work, Env: env,
		ExtraArgs: []string{"--permission-mode", "default"}}).
		Under(relayBin, "wrap", "--name", name, "--")
	term := agenttest.Start(tm.t, cmd)
	stopGently(tm.t, term)
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		tm.t.Fatalf("%s: Claude Code did not get ready under relay wrap: %v", name, err)
	}
	return &claudeAgent{name: name, model: model, term: term}
}

// agentState returns the state the hub lists for name ("" when it is not
// listed).
func (tm *team) agentState(name string) (string, error) {
	out, err := tm.relay("agents", "--json")
	if err != nil {
		return "", fmt.Errorf("relay agents --json: %w: %s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var a struct{ Name, State string }
		if json.Unmarshal([]byte(line), &a) == nil && a.Name == name {
			return a.State, nil
		}
	}
	return "", nil
}

// TestClaudePermissionWaits: while Bob's Claude Code shows a permission
// dialog, Bob is listed as blocked (waiting on his human) and a message for him is
// not typed (a key typed into the dialog would answer it); once the human
// approves, the tool runs, the turn ends and the message reaches Bob's
// model exactly once.
func TestClaudePermissionWaits(t *testing.T) {
	tm := newTeam(t)
	const msg = "please rotate the deploy keys after the freeze"
	work := t.TempDir()
	bob := tm.claudeAsking("Bob", work, func(r mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.Contains(r.LastUser, "make the marker"):
			return mockmodel.Reply{Text: "Creating the marker.", ToolUse: &mockmodel.ToolUse{Name: "Bash",
				Input: map[string]any{"command": "touch marker", "description": "Create the marker"}}}
		case strings.Contains(r.LastUser, msg):
			return mockmodel.Reply{Text: "Will do."}
		}
		return mockmodel.Reply{Text: "The marker exists."}
	})
	tm.waitAgents("Bob")
	screen := func() string { return agenttest.TmuxScreen(t, bob.term.Raw(), 100, 30) }

	if _, err := bob.term.SubmitConfirm("make the marker", 0, 20*time.Second,
		func() bool { return bob.model.Count("make the marker") > 0 }); err != nil {
		t.Fatal(err)
	}
	// The dialog takes keys only once it has settled: wait for quiet.
	if _, err := bob.term.WaitReady(30*time.Second, agenttest.ClaudePermissionPrompt); err != nil {
		t.Fatalf("no permission dialog: %v\nscreen:\n%s", err, screen())
	}
	testutil.Eventually(t, func() error {
		st, err := tm.agentState("Bob")
		if err != nil {
			return err
		}
		if st != "blocked" {
			return fmt.Errorf("Bob is %q, want blocked", st)
		}
		return nil
	})

	if out, err := tm.relay("send", "--from", "Alice", "Bob", msg); err != nil {
		t.Fatalf("relay send: %v: %s", err, out)
	}
	tm.waitHeld(msg, "blocked:") // Bob's wrapper holds it for the dialog
	for _, r := range bob.model.Turns() {
		if strings.Contains(string(r.Body), msg) {
			t.Fatalf("the message reached Bob's model while his human was asked: %q", r.LastUser)
		}
	}
	if n := len(bob.model.Turns()); n != 1 {
		t.Fatalf("Bob's model got %d turns while the dialog was up, want 1 (the dialog was answered?)", n)
	}
	if s := screen(); !agenttest.ClaudePermissionPrompt(s) {
		t.Fatalf("the permission dialog is gone before the human answered:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(work, "marker")); err == nil {
		t.Fatal("the command ran before the human approved it")
	}
	if st, err := tm.agentState("Bob"); err != nil || st != "blocked" {
		t.Errorf("Bob is %q (%v) with the dialog up, want blocked", st, err)
	}

	bob.term.Enter() // the human approves: "1. Yes" is selected
	req := bob.waitTurn(t, msg, 60*time.Second)
	if _, err := os.Stat(filepath.Join(work, "marker")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	// The tool's result went back in a turn of its own, before the message.
	if req.Turn < 3 {
		t.Errorf("the message came in turn %d, want after the prompt and the tool's result: %q", req.Turn, req.LastUser)
	}
	if n := bob.model.Count(msg); n != 1 {
		t.Errorf("Bob's model got the message %d times", n)
	}
	testutil.Eventually(t, func() error {
		st, err := tm.agentState("Bob")
		if err != nil {
			return err
		}
		if st == "blocked" {
			return fmt.Errorf("Bob is still listed as blocked after the dialog was answered")
		}
		return nil
	})
}

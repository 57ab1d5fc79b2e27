package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// markerScript is a model that runs `touch NAME` through the Bash tool when
// asked to "make NAME", and says "Done." or "Will do." otherwise.
func markerScript(r mockmodel.Request) mockmodel.Reply {
	if _, name, ok := strings.Cut(r.LastUser, "make "); ok && !strings.Contains(r.LastUser, "[relay]") {
		name = strings.Fields(name)[0]
		return mockmodel.Reply{Text: "Making " + name + ".", ToolUse: &mockmodel.ToolUse{Name: "Bash",
			Input: map[string]any{"command": "touch " + name, "description": "Make " + name}}}
	}
	if strings.Contains(r.LastUser, "[relay]") {
		return mockmodel.Reply{Text: "Will do."}
	}
	return mockmodel.Reply{Text: "Done."}
}

// askBlocked has Claude Code agent a make a marker file and waits until
// its permission dialog is up and the hub lists a blocked on it.
func (tm *team) askBlocked(a *claudeAgent, marker string) bus.Presence {
	tm.t.Helper()
	if _, err := a.term.SubmitConfirm("make "+marker, 0, 20*time.Second,
		func() bool { return a.model.Count("make "+marker) > 0 }); err != nil {
		tm.t.Fatal(err)
	}
	if _, err := a.term.WaitReady(30*time.Second, agenttest.ClaudePermissionPrompt); err != nil {
		tm.t.Fatalf("no permission dialog: %v\nscreen:\n%s", err, agenttest.TmuxScreen(tm.t, a.term.Raw(), 100, 30))
	}
	var p bus.Presence
	testutil.Eventually(tm.t, func() error {
		var err error
		if p, err = tm.presence(a.name); err != nil {
			return err
		}
		if p.State != bus.StateBlocked || p.Ask == nil || !strings.Contains(p.Ask.Detail, marker) {
			return fmt.Errorf("%s is %s with prompt %+v, want blocked on touch %s", a.name, p.State, p.Ask, marker)
		}
		return nil
	})
	return p
}

// approvals is `relay approvals --json`.
func (tm *team) approvals() ([]bus.Approval, error) {
	out, err := tm.relay("approvals", "--json")
	if err != nil {
		return nil, fmt.Errorf("relay approvals --json: %w: %s", err, out)
	}
	var list []bus.Approval
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var a bus.Approval
		if err := dec.Decode(&a); err != nil {
			return nil, fmt.Errorf("relay approvals --json: %w: %s", err, out)
		}
		list = append(list, a)
	}
	return list, nil
}

// TestApproveClaude: Bob's Claude Code (default permission mode) asks to
// run a command. Bob is blocked; a message for him is held and answers
// nothing (the command has not run, the model has not got it); relay
// approvals lists the tool and command; relay approve from inside another
// wrapped agent is refused and the prompt stays; relay approve runs it,
// then the held message reaches the model. A second prompt denied with a
// reason gives the model the reason, and its command never runs.
func TestApproveClaude(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	work := t.TempDir()
	bob := tm.claudeAsking("Bob", work, markerScript)
	carol := tm.agent("Carol", "bash", "--norc", "--noprofile")
	tm.waitAgents("Bob", "Carol")

	tm.askBlocked(bob, "marker1")
	const msg = "please rotate the deploy keys after the freeze"
	if out, err := tm.relay("send", "--from", "Alice", "Bob", msg); err != nil {
		t.Fatalf("relay send: %v: %s", err, out)
	}
	tm.waitHeld(msg, "blocked: Bash touch marker1")
	list, err := tm.approvals()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Agent != "Bob" || list[0].Tool != "Bash" || list[0].Detail != "touch marker1" ||
		!strings.Contains(string(list[0].Input), `"touch marker1"`) || list[0].Since.IsZero() {
		t.Fatalf("relay approvals: %+v, want Bob's Bash touch marker1", list)
	}

	// Carol is an agent: her relay acts with her own credential.
	out := filepath.Join(t.TempDir(), "approve.out")
	carol.Type(fmt.Sprintf("%s approve Bob > %s 2>&1; echo APPROVE-RC=$((1+$?))\r", relayBin, out))
	carol.WaitOutput("APPROVE-RC=2", 30*time.Second) // relay exits 1
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "refused") {
		t.Errorf("relay approve inside Carol said %q, want a refusal", b)
	}
	if list, err := tm.approvals(); err != nil || len(list) != 1 {
		t.Errorf("after Carol's refused approve: prompts %+v (%v), want Bob's still pending", list, err)
	}
	if _, err := os.Stat(filepath.Join(work, "marker1")); err == nil {
		t.Fatal("the command ran before a human approved it")
	}
	if n := len(bob.model.Turns()); n != 1 || bob.model.Count(msg) != 0 {
		t.Fatalf("Bob's model got %d turns (the message %d times) while blocked, want 1 and 0", n, bob.model.Count(msg))
	}

	if o, err := tm.relay("approve", "Bob"); err != nil || !strings.Contains(o, "allowed Bash: touch marker1") {
		t.Fatalf("relay approve Bob: %v: %s", err, o)
	}
	req := bob.waitTurn(t, msg, 60*time.Second)
	if _, err := os.Stat(filepath.Join(work, "marker1")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	if req.Turn < 3 || bob.model.Count(msg) != 1 {
		t.Errorf("the message came in turn %d, %d times; want once, after the tool's result", req.Turn, bob.model.Count(msg))
	}

	if _, err := bob.term.WaitReady(30*time.Second, agenttest.ClaudeReady); err != nil {
		t.Fatal(err)
	}
	tm.waitState("Bob", bus.StateIdle)
	tm.askBlocked(bob, "marker2")
	if o, err := tm.relay("approve", "Bob", "--deny", "--reason", "no markers on Fridays"); err != nil {
		t.Fatalf("relay approve --deny: %v: %s", err, o)
	}
	bob.waitTurn(t, "no markers on Fridays", 60*time.Second)
	if _, err := os.Stat(filepath.Join(work, "marker2")); err == nil {
		t.Error("the denied command ran")
	}
	tm.waitState("Bob", bus.StateIdle)
}

// TestBlockedEscClaude: a Blocked hook hears of Bob's permission prompt
// (tool and command as data). The human presses Esc on the dialog: Bob is
// no longer blocked, at once, though Claude Code runs no hook then, and
// the next message reaches his model (relay used to keep him "waiting on
// his human" for good and never type another message).
func TestBlockedEscClaude(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	seen := filepath.Join(t.TempDir(), "seen")
	work := project(t, fmt.Sprintf(`
[[hooks.Blocked]]
[[hooks.Blocked.hooks]]
command = 'printf "%%s|%%s|%%s\n" "$RELAY_AGENT" "$RELAY_TOOL" "$RELAY_DETAIL" >> "%s"'
`, seen))
	bob := tm.claudeAsking("Bob", work, markerScript)
	tm.waitAgents("Bob")
	tm.askBlocked(bob, "marker1")
	testutil.Eventually(t, func() error {
		if got := countLines(seen); len(got) != 1 || got[0] != "Bob|Bash|touch marker1" {
			return fmt.Errorf("the Blocked hook saw %q, want Bob|Bash|touch marker1", got)
		}
		return nil
	})

	bob.term.Write([]byte("\x1b")) // the human cancels
	tm.waitState("Bob", bus.StateIdle)
	if list, err := tm.approvals(); err != nil || len(list) != 0 {
		t.Errorf("after Esc: prompts %+v (%v), want none", list, err)
	}
	const msg = "please rotate the deploy keys after the freeze"
	if out, err := tm.relay("send", "--from", "Alice", "Bob", msg); err != nil {
		t.Fatalf("relay send: %v: %s", err, out)
	}
	bob.waitTurn(t, msg, 30*time.Second)
	if _, err := os.Stat(filepath.Join(work, "marker1")); err == nil {
		t.Error("the cancelled command ran")
	}
}

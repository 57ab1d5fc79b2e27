package e2e

import (
	"context"
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

// fixtureText returns the assistant_text of a recording's JSON.
func fixtureText(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recordings", "claude-code-2.1.328", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		AssistantText string `json:"assistant_text"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	return fx.AssistantText
}

// logEntries returns the hub's log as JSON objects.
func (tm *team) logEntries() []map[string]any {
	tm.t.Helper()
	out, err := tm.relay("log", "--json")
	if err != nil {
		tm.t.Fatalf("relay log: %v", err)
	}
	var entries []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil {
			entries = append(entries, e)
		}
	}
	return entries
}

// TestClaudeExactText: Claude Code's hooks give relay the reply's exact
// markdown, so the escaped \@relay:Nobody and the @relay:Example inside a
// code fence do not fire, the mid-line mention does not either, and the
// others fire once with their exact words; a <<< block keeps its lines.
func TestClaudeExactText(t *testing.T) {
	tm := newTeam(t)
	multi := fixtureText(t, "multi-80x24")
	fenced := fixtureText(t, "fenced-100x30")
	alice := tm.claude("Alice", 80, 24, func(r mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.Contains(r.LastUser, "fx-multi"):
			return mockmodel.Reply{Text: multi}
		case strings.Contains(r.LastUser, "fx-fenced"):
			return mockmodel.Reply{Text: fenced}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	tm.claude("Bob", 100, 30, mockmodel.Fixed("OK."))
	// Nobody, Example and Carol would be unknown agents: register none.
	tm.waitAgents("Alice", "Bob")

	alice.term.Submit("fx-multi")
	want := "The schema migration is done; please rebase onto main."
	tm.waitStored(want)
	alice.term.Submit("fx-fenced")
	tm.waitStored("check the migrations")
	testutil.Eventually(t, func() error {
		var msgs []string
		for _, e := range tm.logEntries() {
			msgs = append(msgs, fmt.Sprintf("%v|%v", e["to"], e["body"]))
		}
		got := strings.Join(msgs, "\n")
		for _, w := range []string{
			"Bob|" + want,
			"*|Deploy freeze starts at 17:00 UTC today.",
			"Bob|Review checklist:\n- check the migrations\n- run make test",
		} {
			if strings.Count(got, w) != 1 {
				return fmt.Errorf("want %q once in the log:\n%s", w, got)
			}
		}
		for _, bad := range []string{"Nobody|", "Example|", "Carol|", "in|"} {
			if strings.Contains(got, bad) {
				return fmt.Errorf("%q was sent:\n%s", bad, got)
			}
		}
		return nil
	})
	// The memory was saved once, with its exact text.
	out, err := tm.relay("memory", "search", "signing keys")
	if err != nil || strings.Count(out, "/etc/auth/keys, not from env vars") != 1 {
		t.Errorf("memory search: %v\n%s", err, out)
	}
}

// TestClaudeCommandBeforeToolCall: a command in an assistant message that
// comes before a tool call, in the middle of a turn, is sent once; and a
// command in an assistant record that reaches the transcript after Claude
// Code's Stop hook is sent too, once, by the wrapper's late read of the
// transcript after Stop.
//
// Claude Code may write a turn's last records after its Stop hooks ran
// (hookpath.go, lateTexts); whether it does depends on timing, so the test
// plays it: as soon as the hub shows Alice idle (her wrapper's Stop handler
// has read the transcript and reported the turn over), it appends an
// assistant record to her transcript. Nothing but the late read looks at
// the transcript after that (the turn is over), so the test fails when the
// late read never runs; and since the late read is the last thing that
// could fire the earlier commands again, its command reaching Bob is the
// marker after which "still once" is checked.
func TestClaudeCommandBeforeToolCall(t *testing.T) {
	tm := newTeam(t)
	alice := tm.claude("Alice", 100, 30, mockmodel.Queue(
		mockmodel.Reply{Text: "@relay:Bob I am starting the migration now, hold your deploys.", ToolUse: &mockmodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "true"}}},
		mockmodel.Reply{Text: "Migration started."},
	))
	bob := tm.claude("Bob", 100, 30, mockmodel.Fixed("OK."))
	tm.waitAgents("Alice", "Bob")
	watch := tm.busClient()
	alice.term.Submit("migrate")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := alice.model.WaitReplied(ctx, 1); err != nil { // the tool call: Alice is busy until her Stop
		t.Fatal(err)
	}
	inTurn := time.Now()
	if _, err := alice.model.WaitReplied(ctx, 2); err != nil { // the turn after the tool call
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		ps, err := watch.Agents(ctx)
		for _, p := range ps {
			if p.Name == "Alice" && p.State == bus.StateIdle && p.Since.After(inTurn) {
				return nil
			}
		}
		return fmt.Errorf("Alice not idle after her turn (%v): %+v", err, ps)
	})
	appendAssistantRecord(t, alice.config, "@relay:Bob the migration log is in /var/log/migrate.log, written late.")
	lateCtx, lateCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lateCancel()
	if _, err := bob.model.WaitForRequest(lateCtx, "written late"); err != nil { // only the late read can fire it
		t.Fatalf("the wrapper's late read of the transcript after Stop never ran: the record appended after Alice's Stop was not sent (%v)\nlogs:\n%s", err, tm.wrapperLog())
	}
	bob.waitTurn(t, "hold your deploys", 30*time.Second)
	counts := map[string]int{}
	for _, e := range tm.logEntries() {
		for _, s := range []string{"hold your deploys", "written late"} {
			if strings.Contains(fmt.Sprint(e["body"]), s) {
				counts[s]++
			}
		}
	}
	if counts["hold your deploys"] != 1 || counts["written late"] != 1 {
		t.Errorf("sent: the command before the tool call %d times, the late one %d times; want once each",
			counts["hold your deploys"], counts["written late"])
	}
}

// appendAssistantRecord appends to the one transcript below Claude Code's
// config folder an assistant record with text, as Claude Code writes one.
func appendAssistantRecord(t *testing.T, config, text string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(config, "projects", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one transcript below %s, have %q", config, files)
	}
	rec, err := json.Marshal(map[string]any{"type": "assistant", "isSidechain": false, "uuid": "late-record",
		"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(rec, '\n')); err != nil {
		t.Fatal(err)
	}
}

// busClient connects to the team's hub, closed with the test.
func (tm *team) busClient() *bus.Client {
	tm.t.Helper()
	c, err := bus.Connect(context.Background(), bus.Options{URL: tm.hub.URL(), Token: tm.hub.Token(), Name: "test-watcher"})
	if err != nil {
		tm.t.Fatalf("connect to the hub: %v", err)
	}
	tm.t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestClaudeStopHandOver: a message for Bob that arrives while he works is
// handed to his model at his Stop, through the hook, not typed: his next
// model request carries it, and it is typed nowhere.
func TestClaudeStopHandOver(t *testing.T) {
	tm := newTeam(t)
	gate := make(chan struct{})
	bob := tm.claude("Bob", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "long task") {
			return mockmodel.Reply{Text: "Working on it.", Gate: gate}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	tm.waitAgents("Bob")
	bob.term.Submit("start the long task")
	bob.waitTurn(t, "long task", 30*time.Second)
	if out, err := tm.relay("send", "--from", "Alice", "Bob", "the staging database is back"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	tm.waitStored("the staging database is back")
	close(gate)
	req := bob.waitTurn(t, "the staging database is back", 60*time.Second)
	if !strings.Contains(req.LastUser, "Stop hook feedback") {
		t.Errorf("the message did not come through the Stop hook: %q", req.LastUser)
	}
	if n := bob.model.Count("the staging database is back"); n != 1 {
		t.Errorf("Bob's model got it %d times", n)
	}
	testutil.Eventually(t, func() error {
		for _, e := range tm.logEntries() {
			if strings.Contains(fmt.Sprint(e["body"]), "staging database") && strings.Contains(fmt.Sprint(e["status"]), "seen") {
				return nil
			}
		}
		return fmt.Errorf("no seen receipt")
	})
}

// TestClaudeSteerRidesOnToolResult: with --delivery steer, a message that
// arrives while Claude Code runs a tool reaches the model with the tool's
// result, mid-turn, through the PostToolUse hook.
func TestClaudeSteerRidesOnToolResult(t *testing.T) {
	tm := newTeam(t)
	model := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "Running the slow check.", ToolUse: &mockmodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "sleep 4"}}},
		mockmodel.Reply{Text: "Done."},
	)})
	t.Cleanup(model.Close)
	cmd := agenttest.Claude(t, agenttest.ClaudeOptions{Model: model.URL, Env: tm.relayEnv()}).
		Under(relayBin, "wrap", "--delivery", "steer", "--name", "Bob", "--")
	term := agenttest.Start(t, cmd)
	stopGently(t, term)
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		t.Fatal(err)
	}
	tm.waitAgents("Bob")
	term.Submit("run the slow check")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := model.WaitReplied(ctx, 1); err != nil { // the tool call is out; sleep 4 runs
		t.Fatal(err)
	}
	if out, err := tm.relay("send", "--from", "Alice", "Bob", "stop the deploy, the database is read-only"); err != nil {
		t.Fatalf("send: %v %s", err, out)
	}
	req, err := model.WaitFor(ctx, func(r mockmodel.Request) bool {
		return r.IsTurn() && strings.Contains(string(r.Body), "the database is read-only")
	}, "a turn carrying the steered message")
	if err != nil {
		t.Fatal(err)
	}
	if req.Turn != 2 {
		t.Errorf("the message arrived in turn %d, want 2 (with the tool's result)", req.Turn)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// claudeAgent is a real Claude Code session wrapped by relay, answering from
// a mock model.
type claudeAgent struct {
	name   string
	model  *mockmodel.Anthropic
	term   *agenttest.Term
	config string // Claude Code's CLAUDE_CONFIG_DIR (its transcripts are below)
}

// claude starts the real Claude Code as name under relay wrap, at cols x
// rows, its model answering with script.
func (tm *team) claude(name string, cols, rows int, script mockmodel.Script) *claudeAgent {
	tm.t.Helper()
	model := mockmodel.NewAnthropic(mockmodel.Options{Script: script})
	tm.t.Cleanup(model.Close)
	env := relayVars(tm.env)
	cmd := agenttest.Claude(tm.t, agenttest.ClaudeOptions{Model: model.URL, Cols: cols, Rows: rows, Env: env}).
		Under(relayBin, "wrap", "--name", name, "--")
	started := time.Now()
	term := agenttest.Start(tm.t, cmd)
	stopGently(tm.t, term)
	waitStarted(tm.t, name, "claude", term, agenttest.ClaudeReady, started)
	return &claudeAgent{name: name, model: model, term: term, config: cmd.ConfigDir}
}

// waitTurn waits until the agent's model received a turn containing s.
func (a *claudeAgent) waitTurn(t *testing.T, s string, timeout time.Duration) mockmodel.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := a.model.WaitForRequest(ctx, s)
	if err != nil {
		t.Fatalf("%s's model: %v\nscreen:\n%s", a.name, err, agenttest.TmuxScreen(t, a.term.Raw(), 100, 30))
	}
	return req
}

const aliceAsk = "Please run the integration tests on branch feature/auth and report back the failures you see, with file names and line numbers for each one of them, and say which of them are new since yesterday's run on main."

// TestClaudeRoundTrip: Alice's model writes an @relay:Bob line that Claude
// Code wraps over several rows; Bob's model receives it word for word,
// exactly once; Bob's answer reaches Alice's model.
func TestClaudeRoundTrip(t *testing.T) {
	tm := newTeam(t)
	const bobAnswer = "Three failures, all new: auth_test.go:41, auth_test.go:88 and token_test.go:12."
	alice := tm.claude("Alice", 80, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "kick off") {
			return mockmodel.Reply{Text: "I'll ask Bob.\n\n@relay:Bob " + aliceAsk + "\n\nI'll wait for his answer."}
		}
		return mockmodel.Reply{Text: "Thanks, noted."}
	})
	bob := tm.claude("Bob", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "Message from agent Alice") {
			return mockmodel.Reply{Text: "Running them now.\n\n@relay:Alice " + bobAnswer}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	tm.waitAgents("Alice", "Bob")

	alice.term.Submit("kick off the test run")
	req := bob.waitTurn(t, aliceAsk, 60*time.Second)
	if !strings.Contains(req.LastUser, "@relay:Alice") {
		t.Errorf("Bob was not told how to answer: %q", req.LastUser)
	}
	alice.waitTurn(t, bobAnswer, 60*time.Second)
	if n := bob.model.Count(aliceAsk); n != 1 {
		t.Errorf("Bob's model got Alice's message %d times", n)
	}
	if n := alice.model.Count(bobAnswer); n != 1 {
		t.Errorf("Alice's model got Bob's answer %d times", n)
	}
}

// waitStored waits until the hub's log holds a message containing body.
// waitHeld waits for the receipt that says why the message holding body
// waits (its reason holds why): the positive sign that the target's
// wrapper has the message and chose not to type it.
func (tm *team) waitHeld(body, why string) {
	tm.t.Helper()
	testutil.Eventually(tm.t, func() error {
		out, err := tm.relay("log")
		if err != nil {
			return err
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, body) && strings.Contains(l, ":held ("+why) {
				return nil
			}
		}
		return fmt.Errorf("no held receipt %q for %q yet:\n%s", why, body, out)
	})
}

func (tm *team) waitStored(body string) {
	tm.t.Helper()
	testutil.Eventually(tm.t, func() error {
		log, err := tm.relay("log", "--json")
		if err != nil {
			return err
		}
		if !strings.Contains(log, body) {
			return fmt.Errorf("message %q not in the log yet", body)
		}
		return nil
	})
}

// TestClaudeDraftWaits: while a human draft sits in Bob's input box, a
// message for Bob waits; the draft reaches the model unchanged, and the
// message follows in a turn of its own.
func TestClaudeDraftWaits(t *testing.T) {
	tm := newTeam(t)
	const draft = "refactor the session cache before lunch"
	alice := tm.claude("Alice", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "kick off") {
			return mockmodel.Reply{Text: "@relay:Bob " + aliceAsk}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	bob := tm.claude("Bob", 100, 30, mockmodel.Fixed("OK."))
	tm.waitAgents("Alice", "Bob")

	bob.term.Type(draft) // the human starts typing and stops
	alice.term.Submit("kick off")
	// Bob's wrapper has the message and holds it for the draft.
	tm.waitHeld("feature/auth", "draft:")
	if n := len(bob.model.Turns()); n != 0 {
		t.Fatalf("Bob's model got %d turns while the human's draft was in the box: %q", n, bob.model.Turns()[0].LastUser)
	}
	bob.term.Enter() // the human submits the draft
	req := bob.waitTurn(t, draft, 30*time.Second)
	// Claude Code puts its own reminders before the prompt; the human's
	// text must be the whole of what follows.
	if !strings.HasSuffix(strings.TrimSpace(req.LastUser), "\n"+draft) || strings.Contains(req.LastUser, "[relay]") {
		t.Errorf("the draft reached the model changed: %q", req.LastUser)
	}
	msg := bob.waitTurn(t, aliceAsk, 60*time.Second)
	if strings.Contains(msg.LastUser, draft) {
		t.Errorf("the message was merged with the draft: %q", msg.LastUser)
	}
	if n := bob.model.Count(aliceAsk); n != 1 {
		t.Errorf("Bob's model got the message %d times", n)
	}
}

// TestClaudeBusyThenIdle: a message sent while Bob works arrives after his
// turn ends, in a turn of its own.
func TestClaudeBusyThenIdle(t *testing.T) {
	tm := newTeam(t)
	gate := make(chan struct{})
	alice := tm.claude("Alice", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "kick off") {
			return mockmodel.Reply{Text: "@relay:Bob " + aliceAsk}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	bob := tm.claude("Bob", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "long task") {
			return mockmodel.Reply{Text: "Working on the long task, this takes a while.", Gate: gate}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	tm.waitAgents("Alice", "Bob")

	bob.term.Submit("start the long task")
	bob.waitTurn(t, "long task", 30*time.Second)
	alice.term.Submit("kick off")
	tm.waitHeld("feature/auth", "busy:") // Bob's wrapper holds it for the turn
	if n := bob.model.Count(aliceAsk); n != 0 {
		t.Fatalf("the message reached Bob while he was busy")
	}
	close(gate) // Bob's turn ends
	req := bob.waitTurn(t, aliceAsk, 60*time.Second)
	if strings.Contains(req.LastUser, "long task") {
		t.Errorf("the message was merged into the busy turn: %q", req.LastUser)
	}
	if n := bob.model.Count(aliceAsk); n != 1 {
		t.Errorf("Bob's model got the message %d times", n)
	}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// TestClaudeSendWait: with the real Claude Code, relay send --wait seen
// returns once its UserPromptSubmit hook showed the message reached the
// model, --wait seen to an agent in a long turn exits 1 naming the hold,
// and --wait answered prints what the model wrote back to the sender.
func TestClaudeSendWait(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	gate := make(chan struct{})
	bob := tm.claude("Bob", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.Contains(r.LastUser, "long task"):
			return mockmodel.Reply{Text: "Working on the long task.", Gate: gate}
		case strings.Contains(r.LastUser, "what is 6*7"):
			return mockmodel.Reply{Text: "@relay:tester forty-two"}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	tm.waitAgents("Bob")

	seen := tm.start("send", "--from", "tester", "--wait", "seen", "--json", "Bob", "the nightly build is green")
	if code := seen.wait(t, 90*time.Second); code != 0 {
		t.Fatalf("--wait seen: exit %d: %s %s", code, seen.stdout.String(), seen.stderr.String())
	}
	// Seen from the UserPromptSubmit hook: the model's request follows.
	bob.waitTurn(t, "the nightly build is green", 10*time.Second)
	var sent struct{ ID string }
	if err := json.NewDecoder(&seen.stdout).Decode(&sent); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tm.stagesOf(sent.ID), " "); got != "queued delivered seen" {
		t.Errorf("stages %q, want queued delivered seen", got)
	}

	bob.term.Submit("start the long task")
	bob.waitTurn(t, "long task", 30*time.Second)
	held := tm.start("send", "--from", "tester", "--wait", "seen", "--timeout", "5s", "Bob", "are you done?")
	code := held.wait(t, 30*time.Second)
	close(gate)
	if want := "not seen within 5s: held (busy:"; code != 1 || !strings.Contains(held.stderr.String(), want) {
		t.Fatalf("--wait seen in a long turn: exit %d, stderr %q; want exit 1 and %q", code, held.stderr.String(), want)
	}

	ask := tm.start("send", "--from", "tester", "--wait", "answered", "Bob", "what is 6*7?")
	if code := ask.wait(t, 90*time.Second); code != 0 || ask.stdout.String() != "forty-two\n" {
		t.Fatalf("--wait answered: exit %d, stdout %q, stderr %q; want forty-two", code, ask.stdout.String(), ask.stderr.String())
	}
}

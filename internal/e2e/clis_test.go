package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// modelLog is what the three mock servers share: their request log.
type modelLog interface {
	WaitForRequest(ctx context.Context, s string) (mockmodel.Request, error)
	Count(s string) int
}

// relayEnv is the team's RELAY_* variables and GORACE, for a CLI's own
// environment.
func (tm *team) relayEnv() []string { return relayVars(tm.env) }

// relayVars returns the RELAY_* variables of env and its GORACE (so that
// relay under a CLI reports its races to the test), for a CLI's own
// environment.
func relayVars(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "RELAY_") || strings.HasPrefix(kv, "GORACE=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestThreeCLIs: Alice on Claude Code, Bob on Codex, Carol on Gemini CLI.
// Alice's model writes to Bob and to Carol; each target's model receives
// the body word for word, exactly once; Bob answers Alice and Carol
// broadcasts; each arrives once. relay send --wait answered to Bob and to
// Carol prints their models' answers, seen and answered in the log.
func TestThreeCLIs(t *testing.T) {
	tm := newTeam(t)
	const toBob = "Bob, please review the retry logic in client.go and list every place that can loop forever."
	const toCarol = "Carol, please write the release notes for v1.4 from the merged pull requests of this week."
	const bobAnswer = "Reviewed client.go: two unbounded loops, at lines 88 and 131."
	const carolNews = "Release notes for v1.4 are in RELEASE.md, please read them before the freeze."

	alice := tm.claude("Alice", 100, 30, func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "kick off") {
			return mockmodel.Reply{Text: "Asking both.\n\n@relay:Bob " + toBob + "\n\n@relay:Carol " + toCarol + "\n\nWaiting."}
		}
		return mockmodel.Reply{Text: "Noted."}
	})

	codexModel := mockmodel.NewResponses(mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		if reply, ok := answerSixTimesSeven(r); ok {
			return reply
		}
		if strings.Contains(r.LastUser, "Message from agent Alice") {
			return mockmodel.Reply{Text: "@relay:Alice " + bobAnswer}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	t.Cleanup(codexModel.Close)
	started := time.Now()
	bob := agenttest.Start(t, agenttest.Codex(t, agenttest.CodexOptions{Model: codexModel.URL, Env: tm.relayEnv()}).
		Under(relayBin, "wrap", "--name", "Bob", "--"))
	stopGently(t, bob)

	geminiModel := mockmodel.NewGemini(mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		if reply, ok := answerSixTimesSeven(r); ok {
			return reply
		}
		if strings.Contains(r.LastUser, "Message from agent Alice") {
			return mockmodel.Reply{Text: "On it.\n\n@broadcast: " + carolNews}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	t.Cleanup(geminiModel.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Carol's model requests:\n%s", requestList(geminiModel.All()))
		}
	})
	carol := agenttest.Start(t, agenttest.Gemini(t, agenttest.GeminiOptions{Model: geminiModel.URL, Env: tm.relayEnv()}).
		Under(relayBin, "wrap", "--name", "Carol", "--"))
	stopGently(t, carol)

	// Under load Gemini CLI took more than 60 s to draw its input box
	// (see cliStartWait); the two started together.
	waitStarted(t, "Bob", "codex", bob, agenttest.CodexReady, started)
	waitStarted(t, "Carol", "gemini", carol, agenttest.GeminiReady, started)
	tm.waitAgents("Alice", "Bob", "Carol")

	alice.term.Submit("kick off the review and the notes")
	wait := func(who string, m modelLog, s string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if _, err := m.WaitForRequest(ctx, s); err != nil {
			var screens strings.Builder
			for name, a := range map[string]*agenttest.Term{"Bob": bob, "Carol": carol} {
				cols, rows := a.Size()
				fmt.Fprintf(&screens, "== %s's screen\n%s\n", name, agenttest.TmuxScreen(t, a.Raw(), cols, rows))
			}
			t.Fatalf("%s's model never got %q: %v\n%s\nlogs:\n%s", who, s, err, screens.String(), tm.wrapperLog())
		}
	}
	wait("Bob", codexModel, toBob)
	wait("Carol", geminiModel, toCarol)
	wait("Alice", alice.model, bobAnswer)
	wait("Alice", alice.model, carolNews)
	wait("Bob", codexModel, carolNews)
	// Codex and Gemini take no primer flag: relay typed it once, at start.
	for who, m := range map[string]modelLog{"Bob": codexModel, "Carol": geminiModel} {
		if n := m.Count(`You are agent "` + who + `"`); n != 1 {
			t.Errorf("%s's model got the primer %d times", who, n)
		}
	}
	for _, c := range []struct {
		who string
		m   modelLog
		s   string
	}{{"Bob", codexModel, toBob}, {"Carol", geminiModel, toCarol}, {"Alice", alice.model, bobAnswer}, {"Alice", alice.model, carolNews}} {
		if n := c.m.Count(c.s); n != 1 {
			t.Errorf("%s's model got %q %d times", c.who, c.s, n)
		}
	}
	// relay send --wait answered to Codex and Gemini CLI
	// (receipts_test.go). Gemini CLI once stayed "Thinking…" for good
	// here: under load relay had typed Alice's message before it started
	// the primer's turn (confirm now waits for its record to show each
	// prompt).
	tm.checkSendWait("Bob", bob)
	tm.checkSendWait("Carol", carol)
}

// stopGently ends a wrapped CLI with SIGTERM before the harness kills it,
// so that it has exited before the test's folders are removed.
func stopGently(t testing.TB, term *agenttest.Term) {
	t.Cleanup(func() {
		_ = syscallKill(term.Pid())
		select {
		case <-term.Done():
		case <-time.After(15 * time.Second):
		}
	})
}

// requestList is a mock model's requests, one line each, for a failure's
// diagnosis.
func requestList(reqs []mockmodel.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		replied := "not replied"
		if !r.Replied.IsZero() {
			replied = "replied " + r.Replied.Format("15:04:05.000")
		}
		body := string(r.Body)
		if i := strings.Index(body, "generationConfig"); i >= 0 {
			body = body[i:min(len(body), i+300)]
		} else {
			body = ""
		}
		fmt.Fprintf(&b, "  #%d %s %s turn %d %s %s: %.80q %s\n", r.Seq, r.Time.Format("15:04:05.000"), r.Kind, r.Turn, r.Path, replied, r.LastUser, body)
	}
	return b.String()
}

package e2e

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestGeminiResumedReadsTheScreen: a Gemini CLI session resumed with
// --resume gives relay no transcript it can name in advance, so relay
// says once in its log that it reads the screen, and a command the model
// writes still goes out, once, word for word, from the screen.
func TestGeminiResumedReadsTheScreen(t *testing.T) {
	tm := newTeam(t)
	const body = "the resumed session still reaches you, read off the screen."
	const sentinel = "sentinel: nothing more from the first turn."
	m := mockmodel.NewGemini(mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.Contains(r.LastUser, "send it"):
			return mockmodel.Reply{Text: "Sending it now.\n\n@relay:Bob " + body + "\n\nDone."}
		case strings.Contains(r.LastUser, "send the sentinel"):
			return mockmodel.Reply{Text: "@relay:Bob " + sentinel}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	t.Cleanup(m.Close)
	state, work := t.TempDir(), t.TempDir()
	cmd := func(extra ...string) agenttest.Cmd {
		c, err := agenttest.GeminiCmd(state, agenttest.GeminiOptions{Binary: agenttest.Binary(t, "gemini"), Model: m.URL,
			WorkDir: work, ExtraArgs: extra, Env: tm.relayEnv()})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	// A first session, without relay, to resume.
	first := agenttest.Start(t, cmd())
	if _, err := first.WaitReady(60*time.Second, agenttest.GeminiReady); err != nil {
		t.Fatalf("Gemini CLI not ready: %v", err)
	}
	if _, err := first.SubmitConfirm("hello there", 300*time.Millisecond, 60*time.Second, func() bool { return m.Count("hello there") > 0 }); err != nil {
		t.Fatal(err)
	}
	if _, err := first.WaitScreen(60*time.Second, func(s string) bool { return strings.Contains(s, "OK.") && agenttest.GeminiReady(s) }); err != nil {
		t.Fatal(err)
	}
	first.Close()

	carol := &screenCLI{name: "Carol", kind: "gemini", model: m, ready: agenttest.GeminiReady,
		term: agenttest.Start(t, cmd("--resume", "latest").Under(relayBin, "wrap", "--name", "Carol", "--"))}
	stopGently(t, carol.term)
	carol.waitTurn(t, `You are agent "Carol"`, 60*time.Second) // the typed primer
	carol.waitIdle(t)
	carol.submit(t, "send it")
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if got := tm.sentBy("Carol"); len(got) == 0 {
			return errors.New("nothing from Carol in the log yet")
		}
		return nil
	})
	carol.waitIdle(t)
	// A second firing of the first turn's command would come from that
	// turn's screen, before the command of Carol's next turn is sent.
	carol.submit(t, "send the sentinel")
	testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if got := tm.sentBy("Carol"); !slices.Contains(got, sentinel) {
			return fmt.Errorf("the sentinel is not in the log yet: %q", got)
		}
		return nil
	})
	if got := tm.sentBy("Carol"); !slices.Equal(got, []string{body, sentinel}) {
		t.Errorf("Carol sent %q, want %q once, then the sentinel\nscreen:\n%s", got, body, carol.screen(t))
	}
	log := tm.wrapperLog()
	if n := strings.Count(log, "reading its screen only"); n != 1 {
		t.Errorf("the log says %d times that relay reads the screen, want once:\n%s", n, log)
	}
}

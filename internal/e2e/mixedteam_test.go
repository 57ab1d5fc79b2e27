package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestMixedTeam (issue 36): Claude Code, Codex, pi, OpenCode and a shell,
// each its real program against a mock model, started at once; each
// sends every other one message (the models one reply of four @relay
// lines, the shell four typed lines), and each of the 20 arrives once.
//
// The test types each CLI's kick-off as its human would, and holds every
// model's reply to it until all four took theirs: no message is on its way
// while the test types. Else a peer's message could reach OpenCode in the
// same moment as the typed kick-off, and OpenCode 1.18 answers only the
// last of the prompts that reach it before its run reads them (relay holds
// its own posts for that, session/submitted.go; a human's Enter it cannot
// hold). OpenCode's start dominates the time: 55 s to its input box and
// 25 s for the primer turn on a quiet machine, minutes at a load of 15.
func TestMixedTeam(t *testing.T) {
	tm := newTeam(t)
	clis := []struct{ name, kind string }{
		{"Alice", "claude"}, {"Bob", "codex"}, {"Carol", "pi"}, {"Dave", "opencode"},
	}
	const shell = "Eve"
	names := []string{"Alice", "Bob", "Carol", "Dave", shell}
	body := func(from, to string) string { return fmt.Sprintf("mx-%s-to-%s", from, to) }
	lines := func(from string) []string {
		var out []string
		for _, to := range names {
			if to != from {
				out = append(out, "@relay:"+to+" "+body(from, to))
			}
		}
		return out
	}
	eve := tm.agent(shell, script()...)
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	defer open() // a failed test does not leave the mocks' handlers waiting
	agents := map[string]*screenCLI{}
	for _, c := range clis {
		script := func(r mockmodel.Request) mockmodel.Reply {
			if strings.Contains(r.LastUser, "kick off") {
				return mockmodel.Reply{Text: "Telling everyone.\n\n" + strings.Join(lines(c.name), "\n\n") + "\n\nDone.", Gate: gate}
			}
			return mockmodel.Reply{Text: "Noted."}
		}
		agents[c.name] = launchScreenCLI(t, tm.relayEnv(), c.kind, c.name, 0, 0, script)
	}
	for _, c := range clis {
		agents[c.name].waitStarted(t)
	}
	tm.waitAgents(names...)
	start := time.Now()
	for _, c := range clis {
		agents[c.name].submit(t, "kick off: one message to each peer")
	}
	open() // every model took its kick-off: all reply now
	for _, l := range lines(shell) {
		eve.Type(l + "\r")
	}
	for _, to := range names {
		for _, from := range names {
			if from == to {
				continue
			}
			want := body(from, to)
			if to == shell {
				eve.WaitOutput(delivery.ShellText(want), 180*time.Second)
				continue
			}
			a := agents[to]
			ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
			_, err := a.model.WaitForRequest(ctx, want)
			cancel()
			if err != nil {
				t.Fatalf("%s's model (%s) never got %q: %v\nscreen:\n%s\nlogs:\n%s", to, a.kind, want, err, a.screen(t), tm.wrapperLog())
			}
		}
	}
	t.Logf("20 messages exchanged %v after the kick-off", time.Since(start).Round(time.Second))
	// Late duplicates would come with the next turn: let every CLI finish.
	for _, c := range clis {
		agents[c.name].waitIdle(t)
	}
	for _, c := range clis {
		for _, from := range names {
			if from == c.name {
				continue
			}
			if n := agents[c.name].turnsWith(body(from, c.name)); n != 1 {
				t.Errorf("%s's model got %q in %d turns", c.name, body(from, c.name), n)
			}
		}
	}
	// The shell prints each line it read in one write ("got: " and the
	// line); relay types the next line while that is on its way, so the
	// echo of one line may stand before the "got: " of the one before on
	// the same row. Each peer sent Eve one message: one "got: " each.
	out := string(eve.Output())
	for _, from := range names {
		if from == shell {
			continue
		}
		if n := strings.Count(out, "got:  # [relay] Message from agent "+from+" (id "); n != 1 {
			t.Errorf("%s got %q %d times:\n%s", shell, body(from, shell), n, out)
		}
	}
}

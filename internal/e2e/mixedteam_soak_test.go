//go:build soak

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestMixedTeam (issue 36): Claude Code, Codex, pi, OpenCode and a shell,
// each its real program against a mock model, started at once; each
// sends every other one message (the models one reply of four @relay
// lines, the shell four typed lines), and each of the 20 arrives once.
// It takes minutes on a loaded machine, hence the soak tag: OpenCode needs
// a start and three turns (the primer, the kick-off, the messages), and at
// a load of 16 to 25 on 2 cores its own log shows 36 to 50 s before it
// creates its instance, 17 to 42 s scanning for skills, and 25 to 40 s
// from a submitted prompt to its model request (a title request and a
// second instance boot come first): about 4 minutes at best, far from
// make test's budget, and none of it relay's.
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
	agents := map[string]*screenCLI{}
	for _, c := range clis {
		script := func(r mockmodel.Request) mockmodel.Reply {
			if strings.Contains(r.LastUser, "kick off") {
				return mockmodel.Reply{Text: "Telling everyone.\n\n" + strings.Join(lines(c.name), "\n\n") + "\n\nDone."}
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
	out := string(eve.Output())
	for _, from := range names {
		if from == shell {
			continue
		}
		n := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "got: ") && strings.Contains(line, delivery.ShellText(body(from, shell))) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s got %q %d times:\n%s", shell, body(from, shell), n, out)
		}
	}
}

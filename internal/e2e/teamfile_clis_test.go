//go:build soak

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agenttest"
	"github.com/relayhq/relay/internal/mockmodel"
)

var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// teamAgent writes one [[agent]] of a team file for a CLI command as the
// harness builds it: its argv, folder and environment (its private HOME,
// configuration and mock model), the window's TERM left to tmux.
func teamAgent(name, prompt string, c agenttest.Cmd) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[[agent]]\nname = %q\nprompt = %q\ncwd = %q\ncommand = [", name, prompt, c.Dir)
	for i, a := range c.Argv {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", a)
	}
	b.WriteString("]\n[agent.env]\n")
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		if envKeyRE.MatchString(k) && k != "TERM" {
			fmt.Fprintf(&b, "%s = %q\n", k, v)
		}
	}
	return b.String()
}

// TestSoakTeamFileCLIs: Claude Code (Alice) and Codex (Bob) started by
// relay team up from a file; their prompts make them exchange one message
// each, and each arrives once. It runs under make soak, not make test: it
// takes 40-75 s, and one run in about twelve saw Bob's model get Alice's
// message twice, a cause not found yet (the wrapper logs are dumped when
// it fails).
func TestSoakTeamFileCLIs(t *testing.T) {
	t.Parallel()
	const ask = "Bob, what is the status of the nightly build?"
	const answer = "Alice, the nightly build is green."
	claudeModel := mockmodel.NewAnthropic(mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "Ask Bob about the build") {
			return mockmodel.Reply{Text: "Asking.\n\n@relay:Bob " + ask}
		}
		return mockmodel.Reply{Text: "Noted."}
	}})
	t.Cleanup(claudeModel.Close)
	codexModel := mockmodel.NewResponses(mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, "Message from agent Alice") {
			return mockmodel.Reply{Text: "@relay:Alice " + answer}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	t.Cleanup(codexModel.Close)

	td := newTeamDir(t, "[[agent]]\nname = \"x\"\ncommand = [\"true\"]\n", "")
	claude := agenttest.Claude(t, agenttest.ClaudeOptions{Model: claudeModel.URL, WorkDir: td.repo})
	codex := agenttest.Codex(t, agenttest.CodexOptions{Model: codexModel.URL, WorkDir: td.repo})
	td.write(".relay/team.toml", "[team]\nworkspace = \"clis\"\n\n"+
		teamAgent("Alice", "Ask Bob about the build.", claude)+"\n"+
		teamAgent("Bob", "You answer questions about the build.", codex))
	t.Cleanup(func() {
		td.relay(60*time.Second, "team", "down")
		if t.Failed() {
			for _, w := range []string{"Alice", "Bob"} {
				log, _ := os.ReadFile(filepath.Join(td.home, "logs", "wrap-"+w+".log"))
				t.Logf("== %s's log\n%s", w, log)
			}
		}
	})
	if out, err := td.relay(120*time.Second, "team", "up"); err != nil {
		t.Fatalf("relay team up: %v\n%s", err, out)
	}
	wait := func(who string, m modelLog, s string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if _, err := m.WaitForRequest(ctx, s); err != nil {
			var screens strings.Builder
			for _, w := range []string{"Alice", "Bob"} {
				out, _ := td.run(10*time.Second, "tmux", "capture-pane", "-p", "-t", "=relay-clis:="+w)
				fmt.Fprintf(&screens, "== %s's window\n%s\n", w, out)
				log, _ := os.ReadFile(filepath.Join(td.home, "logs", "wrap-"+w+".log"))
				fmt.Fprintf(&screens, "== %s's log\n%s\n", w, log)
			}
			t.Fatalf("%s's model never got %q: %v\n%s", who, s, err, screens.String())
		}
	}
	wait("Alice", claudeModel, "Ask Bob about the build.")
	wait("Bob", codexModel, ask)
	wait("Alice", claudeModel, answer)
	for _, c := range []struct {
		who string
		m   modelLog
		s   string
	}{
		{"Alice", claudeModel, "Ask Bob about the build."},
		{"Bob", codexModel, "You answer questions about the build."},
		{"Bob", codexModel, ask},
		{"Alice", claudeModel, answer},
	} {
		if n := c.m.Count(c.s); n != 1 {
			t.Errorf("%s's model got %q %d times", c.who, c.s, n)
		}
	}
	out, err := td.relay(90*time.Second, "team", "down")
	if err != nil || !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return l == "Bob: stopped" }) {
		t.Errorf("relay team down: %v\n%s", err, out)
	}
}

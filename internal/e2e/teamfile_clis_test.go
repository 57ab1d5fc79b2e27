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

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
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

// TestTeamFileCLIs: Claude Code (Alice) and Codex (Bob) started by relay
// team up from a file; their prompts make them exchange one message each,
// and each arrives once. On a loaded machine relay's SessionStart hook may
// reach Alice's wrapper late or not at all (Claude Code kills a slow
// hook): her message then reached Bob twice, once from her screen and once
// from her Stop hook (about one run in twelve). On failure it shows both wrapper logs, every
// request each model got, and the CLIs' own records.
func TestTeamFileCLIs(t *testing.T) {
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
			for who, m := range map[string]*mockmodel.Log{"Alice": claudeModel.Log, "Bob": codexModel.Log} {
				for _, r := range m.All() {
					t.Logf("== %s's model: seq %d turn %d kind %s at %s replied %s: %q", who, r.Seq, r.Turn, r.Kind,
						r.Time.Format("15:04:05.000"), r.Replied.Format("15:04:05.000"), r.LastUser)
				}
			}
			for _, dir := range []string{claude.ConfigDir, codex.ConfigDir} {
				filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
						b, _ := os.ReadFile(p)
						t.Logf("== %s\n%s", p, b)
					}
					return nil
				})
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

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// teamDir is a git repository with a team file, a home and a tmux server
// of its own (TMUX_TMPDIR), for relay team.
type teamDir struct {
	t    *testing.T
	repo string // the repository, with .relay/team.toml
	out  string // where the agents write what they got
	home string // RELAY_HOME
	env  []string
}

func newTeamDir(t *testing.T, teamFile, configFile string) *teamDir {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	root := t.TempDir()
	td := &teamDir{t: t, repo: filepath.Join(root, "repo"), out: filepath.Join(root, "out"), home: filepath.Join(root, "home")}
	for _, d := range []string{filepath.Join(td.repo, ".relay"), td.out, filepath.Join(root, "tmux")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	td.env = append(withoutEnv(baseEnv(t), "TMUX", "RELAY_HUB", "RELAY_TOKEN", "RELAY_WORKSPACE", "RELAY_NAME"),
		"RELAY_HOME="+td.home, "TMUX_TMPDIR="+filepath.Join(root, "tmux"),
		"OUT="+td.out, "TERM=xterm-256color",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	td.write(".relay/team.toml", teamFile)
	if configFile != "" {
		td.write(".relay/config.toml", configFile)
	}
	td.git("init", "-q")
	td.git("add", ".relay")
	td.git("commit", "-q", "-m", "team")
	t.Cleanup(func() {
		// Whatever the test left: the agents' windows, then the hub.
		td.run(10*time.Second, "tmux", "kill-server")
		td.relay(30*time.Second, "down")
	})
	return td
}

func withoutEnv(env []string, keys ...string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(keys, k)
	})
}

func (td *teamDir) write(name, data string) {
	td.t.Helper()
	if err := os.WriteFile(filepath.Join(td.repo, name), []byte(data), 0o644); err != nil {
		td.t.Fatal(err)
	}
}

func (td *teamDir) git(args ...string) {
	td.t.Helper()
	if out, err := td.run(20*time.Second, "git", args...); err != nil {
		td.t.Fatalf("git %v: %v: %s", args, err, out)
	}
}

func (td *teamDir) run(d time.Duration, name string, args ...string) (string, error) {
	td.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = td.repo, td.env
	out, err := runWithin(td.t, cmd, d)
	return string(out), err
}

func (td *teamDir) relay(d time.Duration, args ...string) (string, error) {
	td.t.Helper()
	return td.run(d, relayBin, args...)
}

// lines returns the lines an agent wrote to OUT/name.
func (td *teamDir) lines(name string) []string {
	b, _ := os.ReadFile(filepath.Join(td.out, name))
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func countLine(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if l == want {
			n++
		}
	}
	return n
}

// reader is a scripted shell agent: it writes each line it reads to
// $OUT/NAME; "go" makes it message Bob; "exit" (relay stop) ends it.
func reader(name string) string {
	return fmt.Sprintf(`["sh", "-c", "while IFS= read -r l; do printf '%%s\\n' \"$l\" >> \"$OUT/%s\"; case \"$l\" in exit) exit 0;; go) printf '@relay:Bob hello-from-%s\\n\\n';; esac; done"]`, name, name)
}

// TestTeamFile: relay team up starts three shell agents from a team file
// in tmux windows and returns once all joined; each prompt arrives once, a
// message between two arrives once, the worktree agent runs on its branch,
// status lists them, a second up starts nothing, and down ends all three
// (SessionEnd once each) and closes the tmux session.
func TestTeamFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ends := filepath.Join(root, "ends")
	td := newTeamDir(t, `
[team]
workspace = "crew"

[[agent]]
name = "Alice"
command = `+reader("Alice")+`
prompt = "You are Alice: say go."

[[agent]]
name = "Bob"
command = `+reader("Bob")+`
prompt = "You are Bob."

[[agent]]
name = "Carol"
worktree = true
command = ["sh", "-c", "{ pwd; git branch --show-current; } > \"$OUT/carol-where\"; while IFS= read -r l; do case \"$l\" in exit) exit 0;; esac; done"]
`, `
[[hooks.SessionEnd]]
[[hooks.SessionEnd.hooks]]
command = 'echo "$RELAY_AGENT $RELAY_REASON" >> `+ends+`'
`)
	out, err := td.relay(90*time.Second, "team", "up")
	if err != nil {
		t.Fatalf("relay team up: %v\n%s", err, out)
	}
	for _, n := range []string{"Alice: joined", "Bob: joined", "Carol: joined"} {
		if !strings.Contains(out, n) {
			t.Errorf("relay team up does not say %q:\n%s", n, out)
		}
	}
	// Returned after all joined: the hub lists the three now.
	if agents, err := td.relay(20*time.Second, "agents", "--workspace", "crew"); err != nil || strings.Count(agents, "offline") > 0 ||
		!strings.Contains(agents, "Alice") || !strings.Contains(agents, "Bob") || !strings.Contains(agents, "Carol") {
		t.Errorf("relay agents after up (%v):\n%s", err, agents)
	}
	windows := func() string {
		out, _ := td.run(10*time.Second, "tmux", "list-windows", "-t", "=relay-crew", "-F", "#{window_name} #{pane_pid}")
		return out
	}
	before := windows()
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(before), "\n") {
		names = append(names, strings.Fields(l)[0])
	}
	if slices.Sort(names); !slices.Equal(names, []string{"Alice", "Bob", "Carol"}) {
		t.Fatalf("tmux windows: %q", before)
	}

	// Alice is told (through her window, as a human would type) to
	// message Bob.
	if out, err := td.run(10*time.Second, "tmux", "send-keys", "-t", "=relay-crew:=Alice", "go", "Enter"); err != nil {
		t.Fatalf("send-keys: %v: %s", err, out)
	}
	testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		for _, want := range []struct{ agent, line string }{
			{"Alice", " # [relay] You are Alice: say go."},
			{"Bob", " # [relay] You are Bob."},
		} {
			if countLine(td.lines(want.agent), want.line) == 0 {
				return fmt.Errorf("%s has not got %q: %q", want.agent, want.line, td.lines(want.agent))
			}
		}
		for _, l := range td.lines("Bob") {
			if strings.Contains(l, "hello-from-Alice") {
				return nil
			}
		}
		return fmt.Errorf("Bob has not got Alice's message: %q", td.lines("Bob"))
	})
	testutil.WaitFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		b, err := os.ReadFile(filepath.Join(td.out, "carol-where"))
		want := filepath.Join(td.repo, ".relay", "worktrees", "Carol") + "\nrelay/Carol\n"
		if err != nil || string(b) != want {
			return fmt.Errorf("Carol runs in %q (%v), want %q", b, err, want)
		}
		return nil
	})

	status, err := td.relay(20*time.Second, "team", "status")
	if err != nil {
		t.Fatalf("relay team status: %v\n%s", err, status)
	}
	for _, w := range []string{"Alice", "Bob", "tmux relay-crew:Carol", filepath.Join(".relay", "worktrees", "Carol") + " (relay/Carol)"} {
		if !strings.Contains(status, w) {
			t.Errorf("status does not show %q:\n%s", w, status)
		}
	}

	// Up again: nothing new starts.
	again, err := td.relay(60*time.Second, "team", "up")
	if err != nil || strings.Count(again, "running already") != 3 || strings.Contains(again, "joined\n") {
		t.Errorf("second relay team up (%v):\n%s", err, again)
	}
	if after := windows(); after != before {
		t.Errorf("windows changed by the second up:\n%s\nthen:\n%s", before, after)
	}

	down, err := td.relay(90*time.Second, "team", "down")
	if err != nil {
		t.Fatalf("relay team down: %v\n%s", err, down)
	}
	b, _ := os.ReadFile(ends)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(got)
	if !slices.Equal(got, []string{"Alice stop", "Bob stop", "Carol stop"}) {
		t.Errorf("SessionEnd ran: %q, want once for each, by relay stop", got)
	}
	if _, err := td.run(10*time.Second, "tmux", "has-session", "-t", "=relay-crew"); err == nil {
		t.Errorf("the tmux session is still there after down")
	}
	// Each prompt and the message arrived once (the agents are gone: no
	// more can come).
	for _, c := range []struct{ agent, line string }{
		{"Alice", " # [relay] You are Alice: say go."},
		{"Bob", " # [relay] You are Bob."},
	} {
		if n := countLine(td.lines(c.agent), c.line); n != 1 {
			t.Errorf("%s got its prompt %d times: %q", c.agent, n, td.lines(c.agent))
		}
	}
	n := 0
	for _, l := range td.lines("Bob") {
		n += strings.Count(l, "hello-from-Alice")
	}
	if n != 1 {
		t.Errorf("Bob got Alice's message %d times: %q", n, td.lines("Bob"))
	}
	// The worktree is the user's: down leaves it.
	if _, err := os.Stat(filepath.Join(td.repo, ".relay", "worktrees", "Carol", ".git")); err != nil {
		t.Errorf("the worktree is gone after down: %v", err)
	}
}

// TestTeamFileRefused: a team file with a mistake, a command that does not
// exist or an unsafe flag without unsafe = true starts nothing (no hub, no
// tmux session) and says why, with the exit status of each.
func TestTeamFileRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		code int
		want []string
	}{
		{"misspelt key", `
[[agent]]
name = "Alice"
comand = ["sh"]
`, 2, []string{filepath.Join(".relay", "team.toml") + ":4:1: agent.comand: unknown key (did you mean \"command\"?)"}},
		{"missing command", `
[[agent]]
name = "Alice"
command = ["sh"]
[[agent]]
name = "Bob"
command = ["no-such-agent-cli"]
`, 1, []string{"Bob: command not found", "no-such-agent-cli"}},
		{"unsafe flag", `
[[agent]]
name = "Alice"
command = ["sh", "--dangerously-skip-permissions"]
`, 2, []string{":4:1: agent[0].command[1]: --dangerously-skip-permissions switches the agent's own safety off: refused unless the agent says unsafe = true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			td := newTeamDir(t, tt.file, "")
			out, err := td.relay(30*time.Second, "team", "up")
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tt.code {
				t.Fatalf("exit %v, want %d:\n%s", err, tt.code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("the message does not say %q:\n%s", w, out)
				}
			}
			if _, err := td.run(10*time.Second, "tmux", "has-session", "-t", "=relay-default"); err == nil {
				t.Errorf("a tmux session was started")
			}
			if out, err := td.relay(20*time.Second, "agents"); err == nil {
				t.Errorf("a hub was started: relay agents answers:\n%s", out)
			}
		})
	}
}

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// countLines returns the lines of file (none when it does not exist).
func countLines(file string) []string {
	b, _ := os.ReadFile(file)
	s := strings.TrimRight(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestIdleAndOutputHooksDoNotLoop: in a wrapped shell, an Idle hook whose
// answer is typed in runs at most `max` times per idle period (every
// `every` after `after` of quiet), not again for the shell's answer to its
// own text; an Output hook whose matcher matches relay's typed notice sees
// only the line the shell wrote, never relay's notice nor the human's
// typed command, typed key by key or pasted with its Enter in one write.
// Both loop without the fix (relay typed dozens of notices in 20 s).
//
// "No more runs" is shown by a positive signal, not by a window of time:
// a silent second Idle group on the same clock (after 1s, every 1s, max
// 10) runs its last run of a period after the first group's 4th would have
// been due, on the same queue of slow reactions; the Output jobs of the
// screens that showed relay's notices ran before it too.
func TestIdleAndOutputHooksDoNotLoop(t *testing.T) {
	tm := newTeam(t)
	tmp := t.TempDir()
	idle, out, tick := filepath.Join(tmp, "idle"), filepath.Join(tmp, "out"), filepath.Join(tmp, "tick")
	dir := project(t, fmt.Sprintf(`
[[hooks.Idle]]
after = "1s"
every = "2s"
max = 3
[[hooks.Idle.hooks]]
command = 'echo idle >> "%s"; echo "still idle: build the docs"'

[[hooks.Idle]]
after = "1s"
every = "1s"
max = 10
[[hooks.Idle.hooks]]
command = 'echo tick >> "%s"'

[[hooks.Output]]
matcher = "build"
[[hooks.Output.hooks]]
command = 'printf "%%s\n" "$RELAY_LINE" >> "%s"; echo "saw a build line"'
`, idle, tick, out))
	term := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
		relayBin, "wrap", "--name", "Alice", "--", "sh", "-c", "echo 'build started'; exec bash --norc --noprofile -i")

	// waitPeriod waits until the sentinel has run its 10 runs of the
	// period (ticks in all), failing at once when the Idle hook runs more
	// than idles times or Output sees more than outs lines.
	waitPeriod := func(ticks, idles, outs int) {
		t.Helper()
		testutil.WaitFor(t, 90*time.Second, 100*time.Millisecond, func() error {
			if n := len(countLines(idle)); n > idles {
				t.Fatalf("Idle ran %d times, want %d (max 3 per idle period): it loops on its own text\nscreen:\n%s", n, idles, ptytest.Screen(t, term.Output(), 100, 30))
			}
			if o := countLines(out); len(o) > outs {
				t.Fatalf("Output ran for %q: it sees relay's own notices or the human's typing", o)
			}
			if n := len(countLines(tick)); n < ticks {
				return fmt.Errorf("the sentinel Idle group ran %d times, want %d (the Idle hook ran %d times)", n, ticks, len(countLines(idle)))
			}
			return nil
		})
	}
	waitPeriod(10, 3, 1)
	if n := len(countLines(idle)); n != 3 {
		t.Fatalf("Idle ran %d times in the first idle period, want 3 (after 1s, every 2s, max 3)", n)
	}
	if o := countLines(out); len(o) != 1 || o[0] != "build started" {
		t.Fatalf("Output saw %q, want only the shell's own line \"build started\"", o)
	}
	if !strings.Contains(string(term.Output()), "still idle: build the docs") {
		t.Fatalf("the Idle hook's answer was not typed in:\n%s", ptytest.Screen(t, term.Output(), 100, 30))
	}

	// The human's command is real work: a new idle period, three more
	// runs. Output sees what the command wrote, not the typed command.
	for _, k := range "echo build two\r" { // key by key, as a human types
		term.Type(string(k))
		time.Sleep(30 * time.Millisecond)
	}
	waitPeriod(20, 6, 2)
	if n := len(countLines(idle)); n != 6 {
		t.Fatalf("Idle ran %d times in all, want 6 after the human's command (3 per idle period)", n)
	}
	if o := countLines(out); strings.Join(o, "|") != "build started|build two" {
		t.Fatalf("Output saw %q, want the shell's own lines only (not the prompt row holding the typed command)", o)
	}

	// A command pasted with its Enter, in one write, is the human's too.
	term.Type("\x1b[200~echo build three\x1b[201~\r")
	waitPeriod(30, 9, 3)
	if o := countLines(out); strings.Join(o, "|") != "build started|build two|build three" {
		t.Fatalf("Output saw %q, want the shell's own lines only (not the prompt row holding the pasted command)", o)
	}
}

// claudeIn starts the real Claude Code as name under relay wrap in the
// project folder work, its model answering with script.
func (tm *team) claudeIn(name, work string, script mockmodel.Script) *claudeAgent {
	tm.t.Helper()
	model := mockmodel.NewAnthropic(mockmodel.Options{Script: script})
	tm.t.Cleanup(model.Close)
	cmd := agenttest.Claude(tm.t, agenttest.ClaudeOptions{Model: model.URL, WorkDir: work, Env: relayVars(tm.env)}).
		Under(relayBin, "wrap", "--name", name, "--")
	term := agenttest.Start(tm.t, cmd)
	stopGently(tm.t, term)
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		tm.t.Fatalf("%s: Claude Code did not get ready under relay wrap: %v", name, err)
	}
	return &claudeAgent{name: name, model: model, term: term, config: cmd.ConfigDir}
}

// TestBeforeToolCallBlocksClaude: the real Claude Code's model asks for a
// Bash tool call; a BeforeToolCall hook refuses it (exit 2, the reason on
// stderr); the tool never runs, and the model's next request carries the
// hook's reason. Without BeforeToolCall the hook never runs and Claude
// Code asks the human for permission instead.
func TestBeforeToolCallBlocksClaude(t *testing.T) {
	tm := newTeam(t)
	tmp := t.TempDir()
	seen, ran := filepath.Join(tmp, "seen"), filepath.Join(tmp, "ran")
	dir := project(t, fmt.Sprintf(`
[[hooks.BeforeToolCall]]
matcher = "Bash"
[[hooks.BeforeToolCall.hooks]]
command = 'printf "%%s %%s\n" "$RELAY_TOOL" "$RELAY_SUBJECT" >> "%s"; echo "no deletions on Fridays: ask the human first" >&2; exit 2'
`, seen))
	alice := tm.claudeIn("Alice", dir, mockmodel.Queue(
		mockmodel.Reply{Text: "Cleaning up.", ToolUse: &mockmodel.ToolUse{Name: "Bash", Input: map[string]any{"command": "touch " + ran + " && rm -rf build", "description": "clean"}}},
		mockmodel.Reply{Text: "Understood, I will ask first."},
	))
	alice.term.Submit("clean the build folder")
	req := alice.waitTurn(t, "no deletions on Fridays", 60*time.Second)
	if !strings.Contains(req.LastUser, "ask the human first") {
		t.Fatalf("the model's next request lacks the reason: %q", req.LastUser)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("the blocked tool ran")
	}
	if got := countLines(seen); len(got) != 1 || got[0] != "Bash Bash" {
		t.Fatalf("the hook saw %q, want one Bash call", got)
	}
}

// TestStopTypesSessionEnd: `relay stop Alice` runs Alice's SessionEnd
// hook while her shell still runs, types what it prints and the memory
// reminder (prompt_on_end) into the shell, waits for that turn, then ends
// the shell with its own `exit`: the wrapper exits 0, the hook saw the
// reason "stop", and `relay stop` reports the agent stopped.
func TestStopTypesSessionEnd(t *testing.T) {
	tm := newTeam(t)
	seen := filepath.Join(t.TempDir(), "seen")
	dir := project(t, fmt.Sprintf(`
[memory]
prompt_on_end = true

[[hooks.SessionEnd]]
[[hooks.SessionEnd.hooks]]
command = 'echo "$RELAY_REASON $RELAY_SUBJECT" >> "%s"; echo "goodbye: write the changelog"'
`, seen))
	term := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 200, Rows: 30},
		relayBin, "wrap", "--name", "Alice", "--", "bash", "--norc", "--noprofile", "-i")
	tm.waitAgents("Alice")
	term.WaitOutput("$ ", 20*time.Second)

	out, err := tm.relay("stop", "--timeout", "20s", "Alice")
	if err != nil {
		t.Fatalf("relay stop: %v\n%s\nlogs:\n%s", err, out, tm.wrapperLog())
	}
	if !strings.Contains(out, "Alice: stopped") {
		t.Errorf("relay stop said %q", out)
	}
	if code := term.Wait(30 * time.Second); code != 0 {
		t.Errorf("the wrapper exited %d, want 0 (the shell's own exit)", code)
	}
	screen := string(term.Output())
	bye := strings.Index(screen, "# [relay] goodbye: write the changelog")
	remind := strings.Index(screen, "save what you learned")
	exit := strings.LastIndex(screen, "exit")
	if bye < 0 || remind < 0 || exit < bye || exit < remind {
		t.Fatalf("want the SessionEnd text and the memory reminder typed before the exit (at %d, %d, exit at %d):\n%s",
			bye, remind, exit, ptytest.Screen(t, term.Output(), 200, 30))
	}
	if got := countLines(seen); len(got) != 1 || got[0] != "stop stop" {
		t.Errorf("the SessionEnd hook saw %q, want it once, before the exit (reason stop)", got)
	}
}

// TestStopClaude: relay stop types the SessionEnd hook's text into the
// real Claude Code, whose model answers it, then ends Claude Code with its
// own /exit (no signal needed).
func TestStopClaude(t *testing.T) {
	tm := newTeam(t)
	dir := project(t, `
[[hooks.SessionEnd]]
[[hooks.SessionEnd.hooks]]
command = 'echo "wrap up: note what you did in NOTES.md"'
`)
	alice := tm.claudeIn("Alice", dir, mockmodel.Fixed("Noted."))
	tm.waitAgents("Alice")
	out, err := tm.relay("stop", "Alice", "--timeout", "60s")
	if err != nil || !strings.Contains(out, "Alice: stopped") {
		t.Fatalf("relay stop: %v\n%s\nlogs:\n%s", err, out, tm.wrapperLog())
	}
	alice.waitTurn(t, "wrap up: note what you did", 5*time.Second) // reached the model before the exit
	select {
	case <-alice.term.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Claude Code still runs after relay stop")
	}
	if log := tm.wrapperLog(); strings.Contains(log, "signalling the agent") {
		t.Errorf("Claude Code needed a signal: /exit did not end it\n%s", log)
	}
}

// TestStopReminderFires (issue 29.6): with prompt_on_end, `relay stop`
// types relay's reminder to save what was learned "starting with
// @memory:save"; an agent that follows it to the letter (a script that
// copies the command the reminder names) writes a line that fires, so the
// memory holds what it saved. relay used to type ＠memory:save, which an
// agent copies into a line that does nothing.
func TestStopReminderFires(t *testing.T) {
	tm := newTeam(t)
	dir := project(t, `
[memory]
prompt_on_end = true
`)
	// The agent reads each line typed in; from the reminder it takes the
	// word after "starting with " and writes it with its fact.
	agent := `while IFS= read -r l; do
  case "$l" in
    *"starting with "*) w=${l#*starting with }; w=${w%%,*}; printf '%s the build needs make 4.3 or later\n\n' "$w" ;;
    exit) exit 0 ;;
  esac
done`
	term := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 200, Rows: 30},
		relayBin, "wrap", "--name", "Alice", "--", "sh", "-c", agent)
	tm.waitAgents("Alice")

	out, err := tm.relay("stop", "--timeout", "20s", "Alice")
	if err != nil || !strings.Contains(out, "Alice: stopped") {
		t.Fatalf("relay stop: %v\n%s\nlogs:\n%s", err, out, tm.wrapperLog())
	}
	term.Wait(30 * time.Second)
	if !strings.Contains(string(term.Output()), "starting with @memory:save, then finish.") {
		t.Fatalf("the reminder was not typed with its command intact:\n%s", ptytest.Screen(t, term.Output(), 200, 30))
	}
	testutil.WaitFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		out, err := tm.relay("memory", "search", "make")
		if err != nil || !strings.Contains(out, "the build needs make 4.3 or later") {
			return fmt.Errorf("the memory does not hold the agent's fact: %v\n%s", err, out)
		}
		return nil
	})
}

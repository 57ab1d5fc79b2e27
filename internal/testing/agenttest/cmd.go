package agenttest

import (
	"testing"

	"github.com/relayhq/relay/internal/testing/ptytest"
)

// Term is a program running in a real pseudo-terminal: ptytest's one
// terminal type.
type Term = ptytest.Term

// SubmitSettle is the pause between a paste and its Enter (see
// ptytest.SubmitSettle).
const SubmitSettle = ptytest.SubmitSettle

// ReadyQuiet is how long the output must stay unchanged before WaitReady
// trusts a ready screen (see ptytest.ReadyQuiet).
const ReadyQuiet = ptytest.ReadyQuiet

// Cmd is a program to start in a pseudo-terminal: a CLI as built by
// OfflineCLI (or Claude, Codex, Gemini), or any program.
type Cmd struct {
	// Argv is the program and its arguments.
	Argv []string
	// Env is the complete environment (nil: the test's own).
	Env []string
	// Dir is the working directory (empty: the test's own).
	Dir string
	// Cols and Rows size the terminal; 0 means 80 and 24.
	Cols, Rows int
	// ConfigDir is the CLI's private configuration folder (its Offline
	// setup's: CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, …), for
	// tests that add hooks or read transcripts; empty for other programs.
	ConfigDir string
	// AnswerQueries makes the terminal answer the queries the TUIs send at
	// start (see ptytest.Options), when its Offline setup says so
	// (OpenCode).
	AnswerQueries bool
}

// Under returns a copy of c that runs c.Argv under a wrapper, e.g.
// cmd.Under(relayBin, "wrap", "--name", "Bob", "--"): the wrapper gets c's
// environment, folder and size, and starts the CLI itself.
func (c Cmd) Under(prefix ...string) Cmd {
	c.Argv = append(append([]string(nil), prefix...), c.Argv...)
	c.Env = append([]string(nil), c.Env...)
	return c
}

// Options returns the terminal options that start c with ptytest.
func (c Cmd) Options() ptytest.Options {
	return ptytest.Options{Cols: c.Cols, Rows: c.Rows, Env: c.Env, Dir: c.Dir, AnswerQueries: c.AnswerQueries}
}

// Start starts c in a pseudo-terminal (ptytest.Start); it is closed when
// the test ends.
func Start(t testing.TB, c Cmd) *Term {
	t.Helper()
	if len(c.Argv) == 0 {
		t.Fatal("start in pty: empty argv")
	}
	return ptytest.Start(t, c.Options(), c.Argv...)
}

// StartPTY starts argv with env (nil: the test's own) in a cols×rows
// pseudo-terminal, in the test's working directory.
func StartPTY(t testing.TB, argv, env []string, cols, rows int) *Term {
	t.Helper()
	return Start(t, Cmd{Argv: argv, Env: env, Cols: cols, Rows: rows})
}

// StartCmd is Start for programs outside tests (the recorder): the caller
// must Close the Term.
func StartCmd(c Cmd) (*Term, error) { return ptytest.New(c.Options(), c.Argv...) }

// TmuxScreen is ptytest.TmuxScreen, the screen tmux draws from raw.
func TmuxScreen(t testing.TB, raw []byte, cols, rows int) string {
	t.Helper()
	return ptytest.TmuxScreen(t, raw, cols, rows)
}

// RenderScreen is ptytest.RenderScreen: TmuxScreen without a test.
func RenderScreen(raw []byte, cols, rows int) (string, error) {
	return ptytest.RenderScreen(raw, cols, rows)
}

// RenderFrames is ptytest.RenderFrames: the screens after each cut of raw.
func RenderFrames(raw []byte, cols, rows int, cuts []int) ([]string, error) {
	return ptytest.RenderFrames(raw, cols, rows, cuts)
}

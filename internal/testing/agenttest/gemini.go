package agenttest

import (
	"testing"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/gemini"
)

// GeminiOptions configure a Gemini CLI session against a mock model. The
// zero value (apart from Model) means defaults.
type GeminiOptions struct {
	// Model is the mock Gemini server's base URL (mockmodel.Gemini.URL).
	Model string
	// WorkDir is the project folder Gemini CLI starts in; empty means a
	// fresh temporary folder.
	WorkDir string
	// Cols and Rows size the terminal; 0 means 100 and 30.
	Cols, Rows int
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// Env adds or overrides environment variables ("KEY=value").
	Env []string
	// Settings are merged into settings.json at the top level (e.g. "hooks").
	Settings map[string]any
	// Binary is the gemini executable; empty means Binary(t, "gemini").
	Binary string
}

// GeminiModel is the model Gemini CLI is started with: naming one skips the
// routing call that would otherwise precede every turn.
const GeminiModel = gemini.Model

// Gemini returns the command that runs the pinned Gemini CLI offline
// against opts.Model, as its profile's Offline says (gemini.OfflineSetup):
// a temporary GEMINI_CLI_HOME (and HOME) whose .gemini/settings.json
// selects API-key auth, turns off folder trust, updates, usage statistics,
// telemetry and the IDE integration; argv carries -m gemini-2.5-flash. It
// skips the test when Gemini CLI is not installed.
func Gemini(t testing.TB, opts GeminiOptions) Cmd {
	t.Helper()
	state := forTest(t, "gemini", &opts.Binary, &opts.WorkDir)
	c, err := GeminiCmd(state, opts)
	return mustCmd(t, c, err)
}

// GeminiCmd is Gemini for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func GeminiCmd(stateDir string, opts GeminiOptions) (Cmd, error) {
	return OfflineCmdWith(stateDir, "gemini", OfflineOptions{Model: opts.Model, WorkDir: opts.WorkDir, Cols: opts.Cols, Rows: opts.Rows,
		ExtraArgs: opts.ExtraArgs, Env: opts.Env, Binary: opts.Binary},
		func(o agents.OfflineOptions) (agents.OfflineSetup, error) {
			return gemini.OfflineSetup(o, opts.Settings)
		})
}

// GeminiReady reports whether a Gemini CLI screen shows its empty input
// row (gemini.Ready, its profile's Offline.Ready).
func GeminiReady(screen string) bool { return gemini.Ready(screen) }

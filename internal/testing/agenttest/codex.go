package agenttest

import (
	"testing"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/codex"
)

// CodexOptions configure a Codex session against a mock model. The zero
// value (apart from Model) means defaults.
type CodexOptions struct {
	// Model is the mock Responses server's base URL (mockmodel.Responses.URL).
	Model string
	// WorkDir is the project folder Codex starts in, marked trusted; empty
	// means a fresh temporary folder.
	WorkDir string
	// Cols and Rows size the terminal; 0 means 100 and 30.
	Cols, Rows int
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// Env adds or overrides environment variables ("KEY=value").
	Env []string
	// Features are extra keys of config.toml's [features] table, e.g.
	// "codex_hooks = true".
	Features []string
	// ExtraConfig is TOML appended to config.toml, after the tables the
	// harness writes ([model_providers.mock], [features], [analytics],
	// [tui], [projects."WORK"]): start it with a table header.
	ExtraConfig string
	// Binary is the codex executable; empty means Binary(t, "codex").
	Binary string
}

// CodexModel is the model name the mock catalog offers.
const CodexModel = codex.Model

// Codex returns the command that runs the pinned Codex offline against
// opts.Model, as its profile's Offline says (codex.OfflineSetup): a
// temporary, writable CODEX_HOME whose config.toml selects a custom "mock"
// provider (wire_api responses, no retries, no update check, no
// analytics, no daemon, no animations), a one-entry model catalog, and the
// work folder trusted; argv carries --no-daemon. It skips the test when
// Codex is not installed.
func Codex(t testing.TB, opts CodexOptions) Cmd {
	t.Helper()
	state := forTest(t, "codex", &opts.Binary, &opts.WorkDir)
	c, err := CodexCmd(state, opts)
	return mustCmd(t, c, err)
}

// CodexCmd is Codex for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func CodexCmd(stateDir string, opts CodexOptions) (Cmd, error) {
	return OfflineCmdWith(stateDir, "codex", OfflineOptions{Model: opts.Model, WorkDir: opts.WorkDir, Cols: opts.Cols, Rows: opts.Rows,
		ExtraArgs: opts.ExtraArgs, Env: opts.Env, Binary: opts.Binary},
		func(o agents.OfflineOptions) (agents.OfflineSetup, error) {
			return codex.OfflineSetup(o, opts.Features, opts.ExtraConfig)
		})
}

// CodexReady reports whether a Codex screen shows its idle input row
// (codex.Ready, its profile's Offline.Ready).
func CodexReady(screen string) bool { return codex.Ready(screen) }

package agenttest

import (
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/claude"
)

// ClaudeOptions configure a Claude Code session against a mock model. The
// zero value (apart from Model) means defaults.
type ClaudeOptions struct {
	// Model is the mock Anthropic server's base URL (mockmodel.Anthropic.URL).
	Model string
	// WorkDir is the project folder Claude Code starts in, marked trusted;
	// empty means a fresh temporary folder.
	WorkDir string
	// Cols and Rows size the terminal; 0 means 100 and 30.
	Cols, Rows int
	// ExtraArgs are appended to the command line (e.g. --settings JSON).
	ExtraArgs []string
	// Env adds or overrides environment variables ("KEY=value").
	Env []string
	// Binary is the claude executable; empty means Binary(t, "claude").
	Binary string
	// Renderer picks Claude Code's terminal renderer: "" or "fullscreen"
	// (alternate screen, mouse tracking; what new installs get and what the
	// recordings in testdata show) or "classic" (inline on the main
	// screen, output scrolls into the terminal's scrollback).
	Renderer string
}

// Claude returns the command that runs the pinned Claude Code offline
// against opts.Model, as its profile's Offline says (claude.OfflineSetup):
// its state in a temporary CLAUDE_CONFIG_DIR (in a private HOME) whose
// .claude.json skips onboarding, approves the mock key and trusts the work
// folder. It skips the test when Claude Code is not installed. Run it with
// Start, or under `relay wrap`.
func Claude(t testing.TB, opts ClaudeOptions) Cmd {
	t.Helper()
	state := forTest(t, "claude", &opts.Binary, &opts.WorkDir)
	c, err := ClaudeCmd(state, opts)
	return mustCmd(t, c, err)
}

// ClaudeMockKey is the API key Claude Code sends to the mock.
const ClaudeMockKey = claude.MockKey

// ClaudeCmd is Claude for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func ClaudeCmd(stateDir string, opts ClaudeOptions) (Cmd, error) {
	return OfflineCmdWith(stateDir, "claude", OfflineOptions{Model: opts.Model, WorkDir: opts.WorkDir, Cols: opts.Cols, Rows: opts.Rows,
		ExtraArgs: opts.ExtraArgs, Env: opts.Env, Binary: opts.Binary},
		func(o agents.OfflineOptions) (agents.OfflineSetup, error) {
			return claude.OfflineSetup(o, opts.Renderer)
		})
}

// ClaudeReady reports whether a Claude Code screen shows an empty,
// idle input row (claude.Ready, its profile's Offline.Ready).
func ClaudeReady(screen string) bool { return claude.Ready(screen) }

// ClaudePermissionPrompt reports whether a Claude Code screen shows a tool
// permission prompt waiting for the human ("Do you want to proceed?"), or
// auto mode's "can't check actions" dialog, which also waits for a key.
// Claude Code 2.1.328 starts in auto mode, where harmless commands such as
// `true` run at once and risky ones wait for a safety check that a mock
// server cannot give; start it with --permission-mode default to get the
// ordinary prompt for any Bash command.
func ClaudePermissionPrompt(screen string) bool {
	return strings.Contains(screen, "Do you want to proceed?") ||
		strings.Contains(screen, "Auto mode can't check actions")
}

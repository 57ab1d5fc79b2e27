package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
// against opts.Model, with its state in a temporary CLAUDE_CONFIG_DIR (and
// HOME) whose .claude.json skips onboarding, approves the mock key and
// trusts the work folder. It skips the test when Claude Code is not
// installed. Run it with Start, or under `relay wrap`.
func Claude(t testing.TB, opts ClaudeOptions) Cmd {
	t.Helper()
	if opts.Binary == "" {
		opts.Binary = Binary(t, "claude")
	}
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	c, err := ClaudeCmd(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ClaudeMockKey is the API key Claude Code sends to the mock.
const ClaudeMockKey = "sk-ant-mock"

// ClaudeCmd is Claude for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func ClaudeCmd(stateDir string, opts ClaudeOptions) (Cmd, error) {
	if opts.Binary == "" || opts.WorkDir == "" || opts.Model == "" {
		return Cmd{}, fmt.Errorf("claude command: Binary, WorkDir and Model must be set (have %q, %q, %q)",
			opts.Binary, opts.WorkDir, opts.Model)
	}
	if opts.Cols <= 0 {
		opts.Cols = 100
	}
	if opts.Rows <= 0 {
		opts.Rows = 30
	}
	work, err := realDir(opts.WorkDir)
	if err != nil {
		return Cmd{}, fmt.Errorf("claude command: %w", err)
	}
	home := filepath.Join(stateDir, "home")
	config := filepath.Join(stateDir, "claude-config")
	for _, d := range []string{home, config} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Cmd{}, fmt.Errorf("claude command: %w", err)
		}
	}
	key := ClaudeMockKey
	if len(key) > 20 {
		key = key[len(key)-20:]
	}
	state := map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects":               map[string]any{work: map[string]any{"hasTrustDialogAccepted": true}},
	}
	b, _ := json.MarshalIndent(state, "", "  ")
	if err := os.WriteFile(filepath.Join(config, ".claude.json"), b, 0o600); err != nil {
		return Cmd{}, fmt.Errorf("claude command: %w", err)
	}
	env := baseEnv(home)
	env = append(env,
		"CLAUDE_CONFIG_DIR="+config,
		"ANTHROPIC_BASE_URL="+strings.TrimRight(opts.Model, "/"),
		"ANTHROPIC_API_KEY="+ClaudeMockKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
	)
	switch opts.Renderer {
	case "", "fullscreen":
		env = append(env, "CLAUDE_CODE_NO_FLICKER=1")
	case "classic":
		env = append(env, "CLAUDE_CODE_NO_FLICKER=0")
	default:
		return Cmd{}, fmt.Errorf("claude command: renderer %q: want fullscreen or classic", opts.Renderer)
	}
	env = mergeEnv(env, opts.Env)
	argv := append([]string{opts.Binary}, opts.ExtraArgs...)
	return Cmd{Argv: argv, Env: env, Dir: work, Cols: opts.Cols, Rows: opts.Rows, ConfigDir: config}, nil
}

// baseEnv is the environment every CLI gets: a private HOME, the test's
// PATH and locale, and a 256-colour terminal.
func baseEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"USER=" + envOr("USER", "tester"),
		"SHELL=/bin/bash",
	}
	if tz := os.Getenv("TZ"); tz != "" {
		env = append(env, "TZ="+tz)
	}
	return env
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// mergeEnv returns base with the KEY=value entries of extra added, an entry
// of extra replacing one of base with the same key.
func mergeEnv(base, extra []string) []string {
	out := append([]string(nil), base...)
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, b := range out {
			if bk, _, _ := strings.Cut(b, "="); bk == k {
				out[i] = kv
				replaced = true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}

// realDir returns the absolute path of dir with symlinks resolved: the
// key the CLIs use to remember trusted folders.
func realDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("work dir %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("work dir %s: %w", dir, err)
	}
	return real, nil
}

// ClaudeReady reports whether a Claude Code screen shows an empty,
// idle input row: a line starting with "❯" and nothing else, and no
// "esc to interrupt" footer.
func ClaudeReady(screen string) bool {
	if strings.Contains(screen, "esc to interrupt") {
		return false
	}
	for _, line := range strings.Split(screen, "\n") {
		if strings.TrimSpace(line) == "❯" {
			return true
		}
	}
	return false
}

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

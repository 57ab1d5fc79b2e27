// Package agenttest runs the real agent CLIs (Claude Code, Codex, Gemini
// CLI) offline under tests: it finds the pinned binaries installed by
// .ci/install-agents, builds the argv and environment that point each CLI at
// a mock model server (package mockmodel) with a private, temporary
// configuration (Cmd), and starts them in package ptytest's terminal
// (Start; Term is ptytest.Term, the one terminal type of the tests).
//
// A test that needs a CLI calls Binary, which skips the test with a clear
// message when the CLI is not installed; CI installs all three.
package agenttest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The pinned versions, matching .ci/install-agents.
const (
	ClaudeVersion = "2.1.328"
	CodexVersion  = "0.169.0"
	GeminiVersion = "0.61.0"
)

// ErrNotInstalled says a CLI is not in the agents cache.
var ErrNotInstalled = errors.New("agent CLI not installed")

// agent describes where one CLI lives in the cache.
type agent struct {
	folder, bin string
}

func agentOf(name string) (agent, bool) {
	switch name {
	case "claude":
		return agent{"claude-code-" + ClaudeVersion, "claude"}, true
	case "codex":
		return agent{"codex-" + CodexVersion, "codex"}, true
	case "gemini":
		return agent{"gemini-cli-" + GeminiVersion, "gemini"}, true
	}
	return agent{}, false
}

// CacheDirs returns the folders searched for installed CLIs, in order:
// $RELAY_AGENTS_DIR, then $HOME/.cache/relay-agents.
func CacheDirs() []string {
	var dirs []string
	if d := os.Getenv("RELAY_AGENTS_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cache", "relay-agents"))
	}
	return dirs
}

// BinaryPath returns the path of the pinned CLI name ("claude", "codex" or
// "gemini") in the agents cache, or an error wrapping ErrNotInstalled.
func BinaryPath(name string) (string, error) {
	a, ok := agentOf(name)
	if !ok {
		return "", fmt.Errorf("agent %q: unknown (want claude, codex or gemini)", name)
	}
	dirs := CacheDirs()
	for _, d := range dirs {
		p := filepath.Join(d, a.folder, "node_modules", ".bin", a.bin)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("agent %q: %s/node_modules/.bin/%s not found in %v (run .ci/install-agents): %w",
		name, a.folder, a.bin, dirs, ErrNotInstalled)
}

// Binary returns the path of the pinned CLI name, or skips the test when it
// is not installed.
func Binary(t testing.TB, name string) string {
	t.Helper()
	p, err := BinaryPath(name)
	if errors.Is(err, ErrNotInstalled) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

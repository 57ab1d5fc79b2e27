// Package agenttest runs the real agent CLIs (those of the registry with a
// Pin) offline under tests: it finds the pinned binaries installed by
// .ci/install-agents, builds the argv and environment that point each CLI at
// a mock model server (package mockmodel) with a private, temporary
// configuration (Cmd), and starts them in package ptytest's terminal
// (Start; Term is ptytest.Term, the one terminal type of the tests).
//
// A test that needs a CLI calls Binary, which skips the test with a clear
// message when the CLI is not installed; CI installs all of them.
package agenttest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/registry"
)

// The pinned versions of the first three CLIs, as their profiles pin them
// (TestVersionsArePins); Pin gives any CLI's.
const (
	ClaudeVersion = "2.1.328"
	CodexVersion  = "0.169.0"
	GeminiVersion = "0.61.0"
)

// ErrNotInstalled says a CLI is not in the agents cache.
var ErrNotInstalled = errors.New("agent CLI not installed")

// Pin returns the pinned release of the CLI whose profile is name, from
// the registry.
func Pin(name string) (agents.Pin, error) {
	p, err := registry.Named(name)
	if err != nil {
		return agents.Pin{}, fmt.Errorf("agent %q: %w", name, err)
	}
	if p.Pin == nil {
		return agents.Pin{}, fmt.Errorf("agent %q: no pinned release in its profile", name)
	}
	return *p.Pin, nil
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

// BinaryPath returns the path of the pinned CLI name (a profile of the
// registry with a Pin) in the agents cache, or an error wrapping ErrNotInstalled.
func BinaryPath(name string) (string, error) {
	a, err := Pin(name)
	if err != nil {
		return "", err
	}
	dirs := CacheDirs()
	for _, d := range dirs {
		p := filepath.Join(d, a.Dir(), "node_modules", ".bin", a.Bin)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("agent %q: %s/node_modules/.bin/%s not found in %v (run .ci/install-agents): %w",
		name, a.Dir(), a.Bin, dirs, ErrNotInstalled)
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

package agenttest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestEveryPinnedCLIRunsOffline: the harness finds every CLI of the
// registry with a Pin through the one lookup (OfflineOf, OfflineCmd) that
// the tests, the recorder and e2e's launchScreenCLI use, with a mock model
// of its API, a private HOME and its configuration written there. A CLI
// added to the registry needs nothing in this package.
func TestEveryPinnedCLIRunsOffline(t *testing.T) {
	n := 0
	for _, p := range registry.All() {
		if p.Pin == nil {
			continue
		}
		n++
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			off, err := agenttest.OfflineOf(p.Name)
			if err != nil {
				t.Fatalf("pinned but no Offline: %v", err)
			}
			m, err := mockmodel.Start(off.API, mockmodel.Options{})
			if err != nil {
				t.Fatalf("no mock model for its API: %v", err)
			}
			defer m.Close()
			state, work := t.TempDir(), t.TempDir()
			c, err := agenttest.OfflineCmd(state, p.Name, agenttest.OfflineOptions{Model: m.URL, WorkDir: work, Binary: "/path/to/" + p.Pin.Bin})
			if err != nil {
				t.Fatal(err)
			}
			home := filepath.Join(state, "home")
			if c.Argv[0] != "/path/to/"+p.Pin.Bin || !slices.Contains(c.Env, "HOME="+home) {
				t.Errorf("command %q with env %q: want the binary first and HOME=%s", c.Argv, c.Env, home)
			}
			if !strings.HasPrefix(c.ConfigDir, home) {
				t.Errorf("ConfigDir %q is not in the private HOME %s", c.ConfigDir, home)
			}
			if entries, err := os.ReadDir(home); err != nil || len(entries) == 0 {
				t.Errorf("Offline.Setup wrote nothing into HOME: %v", err)
			}
			if off.Ready("") {
				t.Error("Ready accepts an empty screen")
			}
		})
	}
	if n < 6 {
		t.Errorf("only %d pinned CLIs", n)
	}
}

// TestTypedCommandsAreTheProfiles: agenttest.Claude, Codex and Gemini, kept
// for their typed options, build the same command as the profile's
// Offline through OfflineCmd.
func TestTypedCommandsAreTheProfiles(t *testing.T) {
	const model, bin = "http://127.0.0.1:9", "/bin/cli"
	for _, tc := range []struct {
		name  string
		typed func(state, work string) (agenttest.Cmd, error)
	}{
		{"claude", func(state, work string) (agenttest.Cmd, error) {
			return agenttest.ClaudeCmd(state, agenttest.ClaudeOptions{Model: model, WorkDir: work, Binary: bin})
		}},
		{"codex", func(state, work string) (agenttest.Cmd, error) {
			return agenttest.CodexCmd(state, agenttest.CodexOptions{Model: model, WorkDir: work, Binary: bin})
		}},
		{"gemini", func(state, work string) (agenttest.Cmd, error) {
			return agenttest.GeminiCmd(state, agenttest.GeminiOptions{Model: model, WorkDir: work, Binary: bin})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, s1, s2 := t.TempDir(), t.TempDir(), t.TempDir()
			a, err := tc.typed(s1, work)
			if err != nil {
				t.Fatal(err)
			}
			b, err := agenttest.OfflineCmd(s2, tc.name, agenttest.OfflineOptions{Model: model, WorkDir: work, Binary: bin})
			if err != nil {
				t.Fatal(err)
			}
			norm := func(ss ...string) string { return strings.ReplaceAll(strings.Join(ss, "\n"), s2, s1) }
			if norm(a.Argv...) != norm(b.Argv...) || norm(a.Env...) != norm(b.Env...) || norm(a.ConfigDir) != norm(b.ConfigDir) {
				t.Errorf("typed command\n%q %q %s\ndiffers from the profile's\n%q %q %s", a.Argv, a.Env, a.ConfigDir, b.Argv, b.Env, b.ConfigDir)
			}
		})
	}
}

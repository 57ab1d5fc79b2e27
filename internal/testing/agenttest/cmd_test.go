package agenttest_test

import (
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/testing/agenttest"
)

func TestBinaryPathNamesTheInstaller(t *testing.T) {
	t.Setenv("RELAY_AGENTS_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	_, err := agenttest.BinaryPath("claude")
	if err == nil || !strings.Contains(err.Error(), ".ci/install-agents") {
		t.Errorf("err = %v, want a hint to run .ci/install-agents", err)
	}
	if _, err := agenttest.BinaryPath("aider"); err == nil {
		t.Error("an unknown agent has no path")
	}
}

func TestCmdUnderKeepsTheCommand(t *testing.T) {
	c := agenttest.Cmd{Argv: []string{"claude", "--x"}, Env: []string{"A=1"}, Dir: "/w", Cols: 90, Rows: 20}
	u := c.Under("relay", "wrap", "--")
	if got := strings.Join(u.Argv, " "); got != "relay wrap -- claude --x" {
		t.Errorf("argv = %q", got)
	}
	if u.Dir != "/w" || u.Cols != 90 || u.Rows != 20 || len(u.Env) != 1 {
		t.Errorf("wrapped command lost its settings: %+v", u)
	}
	u.Env[0] = "A=2"
	if c.Env[0] != "A=1" || c.Argv[0] != "claude" {
		t.Error("Under changed the original command")
	}
}

func TestVersionsArePins(t *testing.T) {
	for name, v := range map[string]string{"claude": agenttest.ClaudeVersion, "codex": agenttest.CodexVersion, "gemini": agenttest.GeminiVersion} {
		p, err := agenttest.Pin(name)
		if err != nil || p.Version != v {
			t.Errorf("%s: pin %+v, %v; the constant says %s", name, p, err, v)
		}
	}
}

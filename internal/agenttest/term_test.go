package agenttest_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agenttest"
)

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("skipping: tmux is not installed")
	}
}

func TestTmuxScreenRendersCursorAddressing(t *testing.T) {
	needTmux(t)
	tests := []struct {
		name string
		raw  string
		want []string // the first rows, trailing spaces trimmed
	}{
		{"cursor addressing", "@relay:Bob\x1b[12GPlease\x1b[19Grun", []string{"@relay:Bob Please run"}},
		{"bare LF keeps the column", "ab\ncd", []string{"ab", "  cd"}},
		{"terminal queries are not echoed", "\x1b[c\x1b[>q\x1b[6nready", []string{"ready"}},
		{"alternate screen", "main\x1b[?1049h\x1b[Halt", []string{"alt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			screen := agenttest.TmuxScreen(t, []byte(tt.raw), 40, 5)
			rows := strings.Split(screen, "\n")
			for i, w := range tt.want {
				if got := strings.TrimRight(rows[i], " "); got != w {
					t.Errorf("row %d = %q, want %q; screen:\n%s", i, got, w, screen)
				}
			}
		})
	}
}

func TestTermTypesAndReads(t *testing.T) {
	needTmux(t)
	// cat echoes what it reads, so the typed bytes come back as output.
	term := agenttest.StartPTY(t, []string{"sh", "-c", "stty -echo; echo started; exec cat"}, nil, 40, 10)
	if err := term.WaitFor(5*time.Second, func(raw []byte) bool { return bytes.Contains(raw, []byte("started")) }); err != nil {
		t.Fatal(err)
	}
	term.Type("typed")
	term.Paste("pasted")
	term.Enter()
	if err := term.WaitFor(5*time.Second, func(raw []byte) bool { return bytes.Contains(raw, []byte("\x1b[200~pasted\x1b[201~")) }); err != nil {
		t.Fatalf("the paste did not come back: %v (raw %q)", err, term.Raw())
	}
	if _, err := term.WaitScreen(5*time.Second, func(s string) bool { return strings.Contains(s, "typed") }); err != nil {
		t.Fatal(err)
	}
	if err := term.Resize(50, 12); err != nil {
		t.Fatal(err)
	}
	if c, r := term.Size(); c != 50 || r != 12 {
		t.Errorf("size = %dx%d", c, r)
	}
	term.Close()
	if !term.Exited() {
		t.Error("Close returned before the program was reaped")
	}
	term.Close() // twice is fine
}

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

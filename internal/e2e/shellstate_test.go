package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// Issue 30: relay types into a plain shell or REPL only while it waits at
// its own primary prompt. Each case leaves the wrapped program somewhere
// else (an open quote, a heredoc, a password prompt, vim, less, a line
// with text right of the cursor), a peer sends a body made to run there,
// and: the message is held, with its reason in the log; nothing runs and
// the human's file, password or buffer stay theirs; once the human ends
// what they started and the prompt is back, the message goes in.
func TestShellTypesOnlyAtItsPrompt(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	bash := []string{"bash", "--norc", "--noprofile", "-i"}
	cases := []struct {
		name string
		argv []string
		need string // a program the case needs
		// start leaves the program in its state; ready is the output
		// that shows it got there.
		start, ready string
		body         string // %[1]s: the marker file's path
		why          string // the held reason's start
		finish       string // the human's keys that end it
		// check runs once the message was delivered; dir is the case's
		// folder.
		check func(t *testing.T, dir string, sh *ptytest.Term)
	}{
		{
			name: "bash open quote", argv: bash,
			start: "echo 'my note about\r", ready: "\x1b[?2004h> ",
			body: "ok'; touch %[1]s #", why: "an unfinished command",
			finish: "'\r",
		},
		{
			name: "python open triple quote", argv: []string{"python3", "-q"}, need: "python3",
			start: "x = \"\"\"my note about\r", ready: "about\r\n... ",
			body: "x\"\"\"; __import__('os').system('touch %[1]s') #", why: "an unfinished command",
			finish: "\"\"\"\r",
		},
		{
			// Idle once before its prompt shows; the human types as soon
			// as it does: the prompt is learned at their first key.
			name: "python slow to show its prompt", argv: []string{"sh", "-c", "sleep 1; exec python3 -q"}, need: "python3",
			start: "x = \"\"\"my note about\r", ready: "about\r\n... ",
			body: "x\"\"\"; __import__('os').system('touch %[1]s') #", why: "an unfinished command",
			finish: "\"\"\"\r",
		},
		{
			name: "heredoc", argv: bash,
			start: "cat > notes.txt <<EOF\r", ready: "\x1b[?2004h> ",
			body: "EOF\ntouch %[1]s", why: "an unfinished command",
			finish: "mine\rEOF\r",
			check: func(t *testing.T, dir string, sh *ptytest.Term) {
				fileIs(t, filepath.Join(dir, "notes.txt"), "mine\n")
			},
		},
		{
			name: "read -s password", argv: bash,
			start: "read -s -p Password: pw\r", ready: "Password:",
			body: "touch %[1]s", why: "an unfinished command",
			finish: "hunter2\r",
			check: func(t *testing.T, dir string, sh *ptytest.Term) {
				sh.Type("echo \"pw=[$pw]\"\r")
				sh.WaitOutput("pw=[hunter2]", 10*time.Second)
			},
		},
		{
			name: "vim", argv: bash, need: "vim",
			start: "vim -u NONE -N -n -i NONE notes.txt\r", ready: "\x1b[?1049h",
			body: "\x1b:!touch %[1]s", why: "the terminal is in use by vim",
			finish: "ihello\x1b:wq\r",
			check: func(t *testing.T, dir string, sh *ptytest.Term) {
				fileIs(t, filepath.Join(dir, "notes.txt"), "hello\n")
			},
		},
		{
			name: "less", argv: bash, need: "less",
			start: "echo seen > seen.txt; less seen.txt\r", ready: "(END)",
			body: "!touch %[1]s", why: "the terminal is in use by less",
			finish: "q",
		},
		{
			name: "Ctrl-U with text right of the cursor", argv: bash,
			start: "touch nothing main\x1b[D\x1b[D\x1b[D\x1b[D\x15", ready: "main",
			body: "hello; touch %[1]s", why: "draft: the human's line is unfinished",
			finish: "\x0b", // Ctrl-K: now the line is empty
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.need != "" {
				if _, err := exec.LookPath(c.need); err != nil {
					t.Skipf("no %s", c.need)
				}
			}
			tm := newTeam(t)
			dir := t.TempDir()
			marker := filepath.Join(dir, "PWNED")
			tm.env = append(tm.env, "HOME="+dir)
			sh := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
				append([]string{relayBin, "wrap", "--name", "SH", "--"}, c.argv...)...)
			tm.waitState("SH", bus.StateIdle)
			prompt := "$ "
			if c.argv[0] != "bash" {
				prompt = ">>> "
			}
			sh.WaitOutput(prompt, 15*time.Second) // the human sees the prompt
			sh.Type(c.start)
			sh.WaitOutput(c.ready, 15*time.Second)
			body := fmt.Sprintf(c.body, marker)
			if out, err := tm.relay("send", "SH", body); err != nil {
				t.Fatalf("relay send: %v\n%s", err, out)
			}
			key := marker // what the log shows of the body, escapes aside
			tm.waitHeld(key, c.why)
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the peer's text ran while the message was held")
			}
			sh.Type(c.finish)
			tm.waitStatus(key, "SH:delivered")
			// A line that runs after the message is the sign that the
			// program read it.
			probe := "print(6*7)\r"
			if c.argv[0] == "bash" {
				probe = "echo $((6*7))\r"
			}
			sh.Type(probe)
			sh.WaitOutput("42\r\n", 15*time.Second)
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the peer's text ran; screen:\n%s", ptytest.Screen(t, sh.Output(), 100, 30))
			}
			if c.check != nil {
				c.check(t, dir, sh)
			}
		})
	}
}

// fileIs checks that the file at path holds want.
func fileIs(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != want {
		t.Errorf("%s holds %q, want %q", filepath.Base(path), b, want)
	}
}

// waitStatus waits until the log shows the message holding body with
// status (AGENT:STATUS).
func (tm *team) waitStatus(body, status string) {
	tm.t.Helper()
	// The log shows each recipient's latest stage: delivered is reached
	// once it shows delivered or a later one (seen, answered).
	want := []string{status}
	if name, ok := strings.CutSuffix(status, ":delivered"); ok {
		want = append(want, name+":seen", name+":answered")
	}
	testutil.Eventually(tm.t, func() error {
		out, err := tm.relay("log")
		if err != nil {
			return err
		}
		for _, l := range strings.Split(out, "\n") {
			if !strings.Contains(l, body) {
				continue
			}
			for _, w := range want {
				if strings.Contains(l, w) {
					return nil
				}
			}
		}
		return fmt.Errorf("no %s for %q yet:\n%s", status, body, out)
	})
}

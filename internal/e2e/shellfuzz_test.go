package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestShellFuzzUnfinished (issue 30): a wrapped bash and a wrapped python3
// are left, round after round, in a random unfinished state (an open
// quote, a heredoc, a continuation, a question of their own); a peer sends
// a random body built from what closes such states and runs a command.
// The message is held until the human cancels the state with Ctrl-C and
// the prompt is back; nothing ever creates the marker file. The seed is
// fixed (RELAY_FUZZ_SEED sets another) so that a failure repeats.
func TestShellFuzzUnfinished(t *testing.T) {
	seed := uint64(30)
	if s, err := strconv.ParseUint(os.Getenv("RELAY_FUZZ_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d", seed)
	shells := []struct {
		name   string
		argv   []string
		states []string // keys that leave the program unfinished
		probe  string   // a line that prints 42
		prompt string   // its primary prompt
	}{
		{
			name: "bash", argv: []string{"bash", "--norc", "--noprofile", "-i"},
			states: []string{"echo 'a\r", "echo \"a\r", "cat > notes.txt <<EOF\r", "echo a \\\r",
				"echo $(\r", "if true; then\r", "{ echo a\r", "read -p Name: x\r", "read -s -p Password: x\r",
				"for i in 1; do\r", "echo `\r"},
			probe: "echo $((6*7))\r", prompt: "$ ",
		},
		{
			name: "python3", argv: []string{"python3", "-q"},
			states: []string{"x = \"\"\"a\r", "x = '''a\r", "x = (1,\r", "if True:\r", "def f():\r",
				"x = input('Name: ')\r", "x = [\r"},
			probe: "print(6*7)\r", prompt: ">>> ",
		},
	}
	pieces := []string{"'", "\"", "\"\"\"", "'''", ")", "]", "}", "`", "\\", ";", "&&", "\n", " ", "#",
		"EOF", "fi", "done", "x", "pass", "touch %[1]s", "$(touch %[1]s)", "`touch %[1]s`",
		"__import__('os').system('touch %[1]s')", "open('%[1]s','w')"}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			if _, err := exec.LookPath(sh.argv[0]); err != nil {
				t.Skipf("no %s", sh.argv[0])
			}
			rng := rand.New(rand.NewPCG(seed, uint64(len(sh.name))))
			tm := newTeam(t)
			dir := t.TempDir()
			marker := filepath.Join(dir, "PWNED")
			tm.env = append(tm.env, "HOME="+dir)
			term := ptytest.Start(t, ptytest.Options{Env: tm.env, Dir: dir, Cols: 100, Rows: 30},
				append([]string{relayBin, "wrap", "--name", "SH", "--"}, sh.argv...)...)
			t.Cleanup(func() {
				if t.Failed() {
					log, _ := os.ReadFile(filepath.Join(lookupEnv(tm.env, "RELAY_HOME"), "logs", "wrap-SH.log"))
					t.Logf("screen:\n%s\nthe wrapper's log:\n%s", ptytest.Screen(t, term.Output(), 100, 30), log)
				}
			})
			tm.waitState("SH", bus.StateIdle)
			term.WaitOutput(sh.prompt, 15*time.Second)
			for round := range 6 {
				state := sh.states[rng.IntN(len(sh.states))]
				var b strings.Builder
				fmt.Fprintf(&b, "<r%d> ", round) // tells the rounds apart in the log
				for range 2 + rng.IntN(6) {
					b.WriteString(pieces[rng.IntN(len(pieces))])
				}
				b.WriteString(" touch %[1]s")
				body := fmt.Sprintf(b.String(), marker)
				t.Logf("round %d: state %q, body %q", round, state, body)
				n := term.OutputLen()
				term.Type(state)
				// The program's answer to the Enter: it is in that state.
				if err := term.WaitFor(15*time.Second, func(raw []byte) bool { return len(raw) > n+len(state) }); err != nil {
					t.Fatalf("round %d: no answer to %q: %v", round, state, err)
				}
				if out, err := tm.relay("send", "SH", body); err != nil {
					t.Fatalf("relay send: %v\n%s", err, out)
				}
				key := fmt.Sprintf("<r%d>", round)
				tm.waitHeld(key, "an unfinished command")
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("round %d: state %q, body %q: the marker was created while held", round, state, body)
				}
				term.Type("\x03") // the human cancels what they started
				tm.waitStatus(key, "SH:delivered")
				mark := term.OutputLen()
				term.Type(sh.probe)
				if err := term.WaitFor(15*time.Second, func(raw []byte) bool {
					return strings.Contains(string(raw[mark:]), "42\r\n")
				}); err != nil {
					t.Fatalf("round %d: the probe did not run: %v", round, err)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Fatalf("round %d: state %q, body %q: the marker was created; screen:\n%s", round, state, body,
						ptytest.Screen(t, term.Output(), 100, 30))
				}
			}
		})
	}
}

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemo: relay demo, the README's first command, runs its scripted
// conversation to the end; relay demo --team starts the same agents from a
// team file (Alice's prompt typed once starts it), shows every message,
// and leaves no agent running (each wrapper's folder was the demo's).
func TestDemo(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string // lines the output holds once each
	}{
		{"plain", nil, []string{
			"Summary: 5 messages sent, 6 deliveries typed in",
		}},
		{"team", []string{"--team"}, []string{
			`prompt = "kick-off: get the tests run and the auth change reviewed"`,
			"team of 3 up in workspace demo, in the background",
			"Alice → Bob: Hi Bob, please run the integration tests on main and tell me what fails.",
			"Bob → Alice: Ran 42 integration tests on main: all pass.",
			"Alice → Carol: Bob says all 42 tests pass. Can you review the auth change?",
			"Carol → Alice: Reviewed the auth change: looks good, one nit in token.go.",
			"Alice → *: Review done, merging the auth change. Thanks both!",
			"Summary: 5 messages sent, 6 deliveries typed in",
			"Alice: stopped", "Bob: stopped", "Carol: stopped",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			cmd := exec.Command(relayBin, append([]string{"demo", "--timeout", "90s"}, tc.args...)...)
			cmd.Env = append(env(t), "TMPDIR="+tmp)
			out, err := runWithin(t, cmd, 3*time.Minute)
			if err != nil {
				t.Fatalf("relay demo %s: %v\n%s", strings.Join(tc.args, " "), err, out)
			}
			for _, w := range tc.want {
				if n := strings.Count(string(out), w); n != 1 {
					t.Errorf("%q %d times in the output, want once", w, n)
				}
			}
			if left := processesUnder(tmp); len(left) > 0 {
				t.Errorf("processes left running in the demo's folder: %v", left)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// processesUnder lists the processes whose working folder is dir or
// below it.
func processesUnder(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		out = append(out, filepath.Base(p)+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

package oneproc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestOneProcForWrapUnlessSet runs this test binary again as if it were
// `relay wrap` or `relay hook` (its first argument), with and without
// GOMAXPROCS in its environment, and reads the GOMAXPROCS its Go code ran
// with from the start.
func TestOneProcForWrapUnlessSet(t *testing.T) {
	if os.Getenv("ONEPROC_REPORT") != "" {
		// The first argument stops the test flags: every test runs, and
		// this one reports.
		fmt.Printf("gomaxprocs=%d\n", runtime.GOMAXPROCS(0))
		return
	}
	// Without the cgroup's CPU limit the runtime's default is the CPU
	// count (containermaxprocs=0).
	byDefault := runtime.NumCPU()
	tests := []struct {
		name, cmd, env string
		want           int
	}{
		{"wrap: one", "wrap", "", 1},
		{"wrap, GOMAXPROCS set: the environment wins", "wrap", "GOMAXPROCS=3", 3},
		{"hook: the default", "hook", "", byDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == 1 && tt.cmd != "wrap" {
				t.Skip("one CPU: the default is one too")
			}
			cmd := exec.Command(os.Args[0], tt.cmd)
			env := without(without(os.Environ(), "GOMAXPROCS="), "GODEBUG=")
			cmd.Env = append(env, "ONEPROC_REPORT=1", "GODEBUG=containermaxprocs=0")
			if tt.env != "" {
				cmd.Env = append(cmd.Env, tt.env)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %v\n%s", cmd, err, out)
			}
			_, after, ok := strings.Cut(string(out), "gomaxprocs=")
			if !ok {
				t.Fatalf("no report in:\n%s", out)
			}
			got, err := strconv.Atoi(strings.Fields(after)[0])
			if err != nil || got != tt.want {
				t.Errorf("GOMAXPROCS = %d (%v), want %d", got, err, tt.want)
			}
		})
	}
}

// without returns env without the variables whose entry starts with prefix.
func without(env []string, prefix string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

package oneproc

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestOneProcUnlessSet runs this test binary again, with and without
// GOMAXPROCS in its environment, and reads the GOMAXPROCS its Go code
// ran with from the start.
func TestOneProcUnlessSet(t *testing.T) {
	if os.Getenv("ONEPROC_REPORT") != "" {
		t.Logf("gomaxprocs=%d", runtime.GOMAXPROCS(0))
		return
	}
	tests := []struct {
		name, env string
		want      int
	}{
		{"unset: one", "", 1},
		{"set: the environment wins", "GOMAXPROCS=3", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestOneProcUnlessSet$", "-test.v")
			cmd.Env = append(without(os.Environ(), "GOMAXPROCS="), "ONEPROC_REPORT=1")
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

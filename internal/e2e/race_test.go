package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The relay binary under test is built with -race (see TestMain). Every
// relay process a test starts (wrappers, relay send, relay hook under
// Claude Code, ...) gets GORACE pointing its race reports at a folder of the
// test's own, and stopping at the first one with exit code raceExit; at the
// end of the test any report there fails it, quoted in full. TestMain's own
// GORACE catches processes started with an environment that does not come
// from raceEnv.

// raceExit is the exit code of a relay process that found a data race.
const raceExit = 66

// raceMarker starts every report of Go's race detector.
const raceMarker = "WARNING: DATA RACE"

// goraceFor returns the GORACE setting that writes race reports to files
// dir/race.PID.
func goraceFor(dir string) string {
	return fmt.Sprintf("GORACE=halt_on_error=1 exitcode=%d log_path=%s", raceExit, filepath.Join(dir, "race"))
}

// raceEnv returns the GORACE variable for the relay processes of t, and
// registers the check that fails t with any race report they write. Call it
// before starting them: the check then runs after they were stopped.
func raceEnv(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		for _, r := range raceReports(dir) {
			t.Errorf("relay (race-built) reported a DATA RACE:\n%s", r)
		}
	})
	return goraceFor(dir)
}

// baseEnv is os.Environ() with the test's GORACE.
func baseEnv(t testing.TB) []string {
	t.Helper()
	return append(os.Environ(), raceEnv(t))
}

// raceReports returns the race reports in dir ("file: report").
func raceReports(dir string) []string {
	files, _ := filepath.Glob(filepath.Join(dir, "race*"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), raceMarker) {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s):\n%s", filepath.Base(f), raceSummary(string(b)), b))
	}
	return out
}

// raceSummary names the first two goroutine frames of a report, for a
// one-line view of which code raced.
func raceSummary(report string) string {
	var frames []string
	lines := strings.Split(report, "\n")
	for i, l := range lines {
		if (strings.HasPrefix(l, "Write at") || strings.HasPrefix(l, "Read at") ||
			strings.HasPrefix(l, "Previous write at") || strings.HasPrefix(l, "Previous read at")) && i+1 < len(lines) {
			frames = append(frames, strings.TrimSpace(lines[i+1]))
		}
		if len(frames) == 2 {
			break
		}
	}
	return strings.Join(frames, " vs ")
}

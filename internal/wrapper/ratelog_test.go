package wrapper

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestResizeStormLogsOncePerSecond: 13,000 SIGWINCH in 6 s (a window
// dragged about) used to be 13,000 INFO lines; now the first is logged at
// once and then at most one a second, each saying how many were not.
func TestResizeStormLogsOncePerSecond(t *testing.T) {
	var buf bytes.Buffer
	clk := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Session{human: newHumanTerm(nil, nil), log: slog.New(slog.NewTextHandler(&buf, nil))}
	s.resizeLog.now = func() time.Time { return clk }
	const storm, period = 13000, 6 * time.Second
	for i := range storm {
		clk = clk.Add(period / storm)
		s.onSignal(unix.SIGWINCH)
		if i == 0 && !strings.Contains(buf.String(), `signal="window changed"`) {
			t.Fatalf("the first resize was not logged at once: %q", buf.String())
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) > int(period/time.Second)+1 {
		t.Errorf("%d log lines for %d resizes in %v; want at most one a second", len(lines), storm, period)
	}
	if !strings.Contains(lines[len(lines)-1], "not_logged_since_last=") || strings.Contains(lines[len(lines)-1], "not_logged_since_last=0") {
		t.Errorf("the last line does not count the resizes not logged: %q", lines[len(lines)-1])
	}
}

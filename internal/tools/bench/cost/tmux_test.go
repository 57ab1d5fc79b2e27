package main

import (
	"testing"
	"time"
)

// TestParseTmuxTimes: the tmux row's times come from what bash wrote in
// the window: its start and end, the command's exit status, and `times`
// (the shell's own line, then its children's user and system time).
func TestParseTmuxTimes(t *testing.T) {
	out := "1765010000.250000 1765010001.500000 0\n0m0.002s 0m0.001s\n0m0.120s 1m0.380s\n"
	m, err := parseTmuxTimes(out, []string{"cat", "f"})
	if err != nil {
		t.Fatal(err)
	}
	if m.wall != 1250*time.Millisecond {
		t.Errorf("wall %v, want 1.25s", m.wall)
	}
	if m.cpu != 60500*time.Millisecond {
		t.Errorf("cpu %v, want 1m0.5s (the children's line only)", m.cpu)
	}
	if _, err := parseTmuxTimes("1 2 1\n0m0s 0m0s\n0m0s 0m0s\n", []string{"false"}); err == nil {
		t.Error("a command that failed gave no error")
	}
	if _, err := parseTmuxTimes("1 2 0\n", []string{"cat"}); err == nil {
		t.Error("output without times gave no error")
	}
}

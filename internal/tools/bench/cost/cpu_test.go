package main

import (
	"strings"
	"testing"
	"time"
)

// A disturbed window (the host took the machine away for a while) moves
// neither the median nor the least window, and the relation to the floor
// is taken window by window: the floor measured in the same window.
func TestCPURowsSetADisturbedWindowApart(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	win := func(spin, bare float64) cpuWindow {
		return cpuWindow{length: 15 * time.Second, spin: ms(spin), bare: ms(bare), idle: ms(2), frames: 187, load: "0.50", busy: 0.1}
	}
	// 30 ms in 15 s is 0.120 s/min; the fifth window is a spell of the
	// host's in which both read four times as much.
	ws := []cpuWindow{win(30, 25), win(31, 25), win(29, 24), win(30, 26), win(120, 100), win(32, 25), win(30, 25), win(28, 24)}
	rows := cpuRows(ws, false)
	want := []string{
		"0.120 s/min median, 0.112 the least window, 0.165 all windows as one (8 windows of 15s; load 0.50-0.50)",
		"",
		"0.100 s/min median, 0.096 the least window, 0.137 all windows as one",
		// (30-25)/187 ms a frame, the median of the per-window figures.
		"1.20x median (1.15-1.28x); relay adds 26.7µs a frame, median",
	}
	for i, w := range want {
		if !strings.Contains(rows[i].figure, w) {
			t.Errorf("row %q: %q, want it to hold %q", rows[i].what, rows[i].figure, w)
		}
	}
}

// The wrapper over the floor is the median of each window's ratio, not
// the ratio of the medians: the floor of a window is the one measured
// beside the wrapper in it.
func TestCPURowsRatioWindowByWindow(t *testing.T) {
	var ws []cpuWindow
	for i := range 8 {
		// The wrapper steady at 30 ms a window, the floor at 20 ms in
		// four windows and 30 in four: ratios 1.5 and 1.0, the ratio of
		// the medians 1.2.
		bare := 20 * time.Millisecond
		if i%2 == 1 {
			bare = 30 * time.Millisecond
		}
		ws = append(ws, cpuWindow{length: 15 * time.Second, spin: 30 * time.Millisecond, bare: bare, frames: 187, load: "1.00"})
	}
	if got, want := cpuRows(ws, false)[3].figure, "1.25x median (1.00-1.50x)"; !strings.HasPrefix(got, want) {
		t.Errorf("over the floor: %q, want %q", got, want)
	}
}

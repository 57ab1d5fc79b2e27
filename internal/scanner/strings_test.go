package scanner

import (
	"testing"
	"time"
)

// TestOpenStringIsCut: a terminal string left open (a lone ESC P, as random
// bytes leave behind) hides what follows only until the output pauses or
// the string has been open for stringLife; then commands fire again.
func TestOpenStringIsCut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		intro string
		// gap is the pause before the command is written; the writes
		// in between come every 100 ms (a TUI's spinner).
		gap      time.Duration
		busyFor  time.Duration
		wantFire bool
	}{
		{"dcs-then-pause", "\x1bP", stringQuiet, 0, true},
		{"osc-then-pause", "\x1b]0;", stringQuiet, 0, true},
		{"apc-then-pause", "\x1b_", stringQuiet, 0, true},
		{"dcs-no-pause", "\x1bP", 100 * time.Millisecond, 0, false},
		{"dcs-steady-output", "\x1bP", 100 * time.Millisecond, stringLife, true},
		{"dcs-steady-output-short", "\x1bP", 100 * time.Millisecond, stringLife - 200*time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 80, 24, "generic")
			h.s.Write([]byte("$ head -c 30M /dev/urandom\r\n\x01" + tc.intro + "\r\n$ "))
			for el := time.Duration(0); el < tc.busyFor; el += 100 * time.Millisecond {
				h.clk.advance(100 * time.Millisecond)
				h.s.Write([]byte("."))
			}
			h.clk.advance(tc.gap)
			h.write("echo hi\r\n@relay:Bob after-dcs\r\n$ ")
			h.settle()
			if tc.wantFire {
				h.want("@relay:Bob after-dcs")
			} else {
				h.want()
			}
		})
	}
}

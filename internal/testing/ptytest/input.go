package ptytest

import (
	"bytes"
	"fmt"
	"io"
	"time"
)

// SubmitSettle is the pause between a paste and its Enter. Measured here
// (4 prompts per cell, idle CLI, first Enter only):
//
//	                    same write  50 ms  150 ms  300 ms
//	Claude Code paste       4/4      4/4    4/4     4/4
//	Claude Code typed       4/4      4/4    4/4     4/4
//	Codex paste             4/4      4/4    4/4     4/4
//	Codex typed             0/4      4/4    4/4     4/4
//	Gemini CLI paste        0/4      2/4    4/4     4/4
//	Gemini CLI typed        0/4      4/4    4/4     4/4
//
// Gemini CLI's first prompt right after start-up was once taken as a
// newline at 150 ms on this loaded machine: use 300 ms for it, and confirm
// (SubmitConfirm) with one more Enter when the text was not submitted.
const SubmitSettle = 150 * time.Millisecond

var _ io.Writer = (*Term)(nil)

// Write writes p to the program's input as one write.
func (tm *Term) Write(p []byte) (int, error) {
	n, err := tm.ptmx.Write(p)
	if err != nil {
		return n, fmt.Errorf("write to pty: %w", err)
	}
	return n, nil
}

// Type writes keys as the human would, in one write.
func (tm *Term) Type(s string) {
	tm.helper()
	tm.must(tm.Write([]byte(s)))
}

// Paste writes s as one bracketed paste (ESC[200~ s ESC[201~).
func (tm *Term) Paste(s string) {
	tm.helper()
	tm.must(tm.Write([]byte("\x1b[200~" + s + "\x1b[201~")))
}

// Enter writes a carriage return, in its own write.
func (tm *Term) Enter() {
	tm.helper()
	tm.must(tm.Write([]byte("\r")))
}

// Submit pastes s, waits SubmitSettle, and presses Enter: the way that was
// submitted by all three agent CLIs once they are idle.
func (tm *Term) Submit(s string) {
	tm.helper()
	tm.Paste(s)
	time.Sleep(SubmitSettle)
	tm.Enter()
}

// SubmitConfirm pastes s, waits settle (0 means SubmitSettle), presses
// Enter, and waits up to timeout for submitted to report true (typically
// "the mock model saw s"). If half the timeout passes without it, it
// presses Enter once more: on a loaded machine a slow TUI can read the
// paste and the Enter together and take the Enter for a newline. It
// returns how many Enters it took, or an error.
func (tm *Term) SubmitConfirm(s string, settle, timeout time.Duration, submitted func() bool) (int, error) {
	tm.helper()
	if settle <= 0 {
		settle = SubmitSettle
	}
	tm.Paste(s)
	time.Sleep(settle)
	for enters := 1; enters <= 2; enters++ {
		tm.Enter()
		deadline := time.Now().Add(timeout / 2)
		for time.Now().Before(deadline) {
			if submitted() {
				return enters, nil
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return 2, fmt.Errorf("text not submitted after two Enters within %v: %.60q", timeout, s)
}

func (tm *Term) must(_ int, err error) {
	if err != nil {
		tm.helper()
		tm.fatalf("%v", err)
	}
}

// answer replies to device-attribute and cursor-position queries in b. A
// query split across two reads is missed; none of the CLIs needs answers.
func (tm *Term) answer(b []byte) {
	if bytes.Contains(b, []byte("\x1b[c")) || bytes.Contains(b, []byte("\x1b[0c")) {
		_, _ = tm.ptmx.Write([]byte("\x1b[?1;2c"))
	}
	if bytes.Contains(b, []byte("\x1b[6n")) {
		_, _ = tm.ptmx.Write([]byte("\x1b[1;1R"))
	}
}

package ptytest

import (
	"bytes"
	"fmt"
	"os"
	"time"
)

// Output returns a copy of everything the program wrote so far.
func (tm *Term) Output() []byte {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return bytes.Clone(tm.out)
}

// Raw is Output, under the name the agent harnesses use.
func (tm *Term) Raw() []byte { return tm.Output() }

// OutputLen returns how many bytes the program wrote so far.
func (tm *Term) OutputLen() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return len(tm.out)
}

// WriteRaw saves everything written so far to path.
func (tm *Term) WriteRaw(path string) error {
	if err := os.WriteFile(path, tm.Output(), 0o644); err != nil {
		return fmt.Errorf("save terminal output: %w", err)
	}
	return nil
}

// WaitOutput waits until the output contains want, or fails the test after
// timeout, showing the end of the output. It keeps waiting after the
// program exits: a process it left behind may still write.
func (tm *Term) WaitOutput(want string, timeout time.Duration) {
	tm.helper()
	if err := tm.waitFor(timeout, false, func(raw []byte) bool { return bytes.Contains(raw, []byte(want)) }); err != nil {
		tm.fatalf("output has no %q: %v; last bytes:\n%q", want, err, lastBytes(tm.Output(), 2000))
	}
}

// WaitFor waits until cond holds for the output so far, checking whenever
// output arrives. It returns an error when timeout passes or the program
// exits first.
func (tm *Term) WaitFor(timeout time.Duration, cond func(raw []byte) bool) error {
	return tm.waitFor(timeout, true, cond)
}

// waitFor is WaitFor; untilExit says whether the program's exit ends the
// wait.
func (tm *Term) waitFor(timeout time.Duration, untilExit bool, cond func(raw []byte) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		tm.mu.Lock()
		ok := cond(tm.out)
		exited, changed, n, waitErr := tm.exited, tm.changed, len(tm.out), tm.waitErr
		tm.mu.Unlock()
		if ok {
			return nil
		}
		if exited && untilExit {
			return fmt.Errorf("program exited (%v) after %d bytes of output before the condition held", waitErr, n)
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("condition not met after %v (%d bytes of output)", timeout, n)
		}
	}
}

// WaitQuiet waits until no output has arrived for quiet, or timeout passes.
func (tm *Term) WaitQuiet(quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		tm.mu.Lock()
		changed, exited := tm.changed, tm.exited
		tm.mu.Unlock()
		if exited {
			return nil
		}
		t := time.NewTimer(quiet)
		select {
		case <-changed:
			t.Stop()
			if time.Now().After(deadline) {
				return fmt.Errorf("output still changing after %v", timeout)
			}
		case <-t.C:
			return nil
		}
	}
}

// WaitScreen waits until cond holds for the screen rendered by tmux from
// the output so far (see RenderScreen), polling every 100 ms. On timeout the
// error shows the last screen.
func (tm *Term) WaitScreen(timeout time.Duration, cond func(screen string) bool) (string, error) {
	deadline := time.Now().Add(timeout)
	last := -1
	screen := ""
	for {
		raw := tm.Output()
		cols, rows := tm.Size()
		if len(raw) != last {
			s, err := RenderScreen(raw, cols, rows)
			if err != nil {
				return "", err
			}
			screen, last = s, len(raw)
			if cond(screen) {
				return screen, nil
			}
		}
		if time.Now().After(deadline) {
			return screen, fmt.Errorf("screen condition not met after %v; screen:\n%s", timeout, screen)
		}
		if tm.Exited() && tm.OutputLen() == last {
			return screen, fmt.Errorf("program exited before the screen condition held; screen:\n%s", screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ReadyQuiet is how long the output must stay unchanged before WaitReady
// trusts a ready screen: Gemini CLI draws its input row before it reads
// input, and an early paste plus Enter arrive together and become a
// newline.
const ReadyQuiet = 500 * time.Millisecond

// WaitReady waits until the output has been quiet for ReadyQuiet and the
// tmux-rendered screen satisfies ready (e.g. agenttest.ClaudeReady), and
// returns that screen. On timeout the error shows the last screen.
func (tm *Term) WaitReady(timeout time.Duration, ready func(screen string) bool) (string, error) {
	deadline := time.Now().Add(timeout)
	screen := ""
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return screen, fmt.Errorf("not ready after %v; screen:\n%s", timeout, screen)
		}
		if err := tm.WaitQuiet(ReadyQuiet, left); err != nil {
			return screen, fmt.Errorf("not ready: %w; screen:\n%s", err, screen)
		}
		cols, rows := tm.Size()
		s, err := RenderScreen(tm.Output(), cols, rows)
		if err != nil {
			return "", err
		}
		screen = s
		if ready(screen) {
			return screen, nil
		}
		if tm.Exited() {
			return screen, fmt.Errorf("program exited before it was ready; screen:\n%s", screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

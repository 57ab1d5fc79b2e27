package agenttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
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

// Cmd is a program to start in a pseudo-terminal.
type Cmd struct {
	// Argv is the program and its arguments.
	Argv []string
	// Env is the complete environment (nil: the test's own).
	Env []string
	// Dir is the working directory (empty: the test's own).
	Dir string
	// Cols and Rows size the terminal; 0 means 80 and 24.
	Cols, Rows int
	// ConfigDir is the CLI's private configuration folder (CLAUDE_CONFIG_DIR,
	// CODEX_HOME or GEMINI_CLI_HOME), for tests that add hooks or read
	// transcripts; empty for other programs.
	ConfigDir string
	// AnswerQueries makes the harness answer the terminal queries the TUIs
	// send at start (primary device attributes and cursor position) the
	// way a terminal would. None of the three CLIs needs it.
	AnswerQueries bool
}

// Under returns a copy of c that runs c.Argv under a wrapper, e.g.
// cmd.Under(relayBin, "wrap", "--name", "Bob", "--"): the wrapper gets c's
// environment, folder and size, and starts the CLI itself.
func (c Cmd) Under(prefix ...string) Cmd {
	c.Argv = append(append([]string(nil), prefix...), c.Argv...)
	c.Env = append([]string(nil), c.Env...)
	return c
}

// Term is a program running in a real pseudo-terminal. Everything it writes
// is kept (Raw); input is written with Type, Paste and Enter. Its methods
// are safe for concurrent use.
type Term struct {
	t    testing.TB
	cmd  *exec.Cmd
	ptmx *os.File

	mu      sync.Mutex
	raw     []byte
	cols    int
	rows    int
	changed chan struct{} // closed and replaced when raw grows or the program exits
	exited  bool
	done    chan struct{} // closed when the reader and the process are finished
	waitErr error

	closeOnce sync.Once
}

// StartPTY starts argv with env (nil: the test's own) in a cols×rows
// pseudo-terminal, in the test's working directory. Close is registered as
// cleanup.
func StartPTY(t testing.TB, argv, env []string, cols, rows int) *Term {
	t.Helper()
	return Start(t, Cmd{Argv: argv, Env: env, Cols: cols, Rows: rows})
}

// Start starts c in a pseudo-terminal; Close is registered as cleanup. The
// test fails if the program cannot be started.
func Start(t testing.TB, c Cmd) *Term {
	t.Helper()
	tm, err := StartCmd(c)
	if err != nil {
		t.Fatal(err)
	}
	tm.t = t
	t.Cleanup(tm.Close)
	return tm
}

// StartCmd is Start for programs outside tests (the recorder): the caller
// must Close the Term.
func StartCmd(c Cmd) (*Term, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("start in pty: empty argv")
	}
	if c.Cols <= 0 {
		c.Cols = 80
	}
	if c.Rows <= 0 {
		c.Rows = 24
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(c.Cols), Rows: uint16(c.Rows)})
	if err != nil {
		return nil, fmt.Errorf("start %s in pty: %w", c.Argv[0], err)
	}
	tm := &Term{cmd: cmd, ptmx: ptmx, cols: c.Cols, rows: c.Rows,
		changed: make(chan struct{}), done: make(chan struct{})}
	go tm.read(c.AnswerQueries)
	return tm, nil
}

// read copies the program's output into raw until the pty closes, then
// reaps the process.
func (tm *Term) read(answer bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := tm.ptmx.Read(buf)
		if n > 0 {
			tm.mu.Lock()
			tm.raw = append(tm.raw, buf[:n]...)
			tm.notifyLocked()
			tm.mu.Unlock()
			if answer {
				tm.answer(buf[:n])
			}
		}
		if err != nil {
			break
		}
	}
	err := tm.cmd.Wait()
	tm.mu.Lock()
	tm.exited = true
	tm.waitErr = err
	tm.notifyLocked()
	tm.mu.Unlock()
	close(tm.done)
}

func (tm *Term) notifyLocked() {
	close(tm.changed)
	tm.changed = make(chan struct{})
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

// Raw returns a copy of everything the program wrote so far.
func (tm *Term) Raw() []byte {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return append([]byte(nil), tm.raw...)
}

// Size returns the terminal's current size.
func (tm *Term) Size() (cols, rows int) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.cols, tm.rows
}

// Exited reports whether the program has exited.
func (tm *Term) Exited() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.exited
}

// Pid returns the program's process id (also its process group id).
func (tm *Term) Pid() int { return tm.cmd.Process.Pid }

// Write writes b to the program's input as one write.
func (tm *Term) Write(b []byte) (int, error) {
	n, err := tm.ptmx.Write(b)
	if err != nil {
		return n, fmt.Errorf("write to pty: %w", err)
	}
	return n, nil
}

// Type writes s as typed text, in one write.
func (tm *Term) Type(s string) { tm.must(tm.Write([]byte(s))) }

// Paste writes s as one bracketed paste (ESC[200~ s ESC[201~).
func (tm *Term) Paste(s string) { tm.must(tm.Write([]byte("\x1b[200~" + s + "\x1b[201~"))) }

// Enter writes a carriage return, in its own write.
func (tm *Term) Enter() { tm.must(tm.Write([]byte("\r"))) }

// Submit pastes s, waits SubmitSettle, and presses Enter: the way that was
// submitted by all three CLIs once they are idle.
func (tm *Term) Submit(s string) {
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
	if err == nil {
		return
	}
	if tm.t != nil {
		tm.t.Helper()
		tm.t.Fatal(err)
	}
	panic(err)
}

// Resize changes the terminal size (the program gets SIGWINCH).
func (tm *Term) Resize(cols, rows int) error {
	if err := pty.Setsize(tm.ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		return fmt.Errorf("resize pty to %dx%d: %w", cols, rows, err)
	}
	tm.mu.Lock()
	tm.cols, tm.rows = cols, rows
	tm.mu.Unlock()
	return nil
}

// WaitFor waits until cond holds for the output so far, checking whenever
// output arrives. It returns an error when timeout passes or the program
// exits first.
func (tm *Term) WaitFor(timeout time.Duration, cond func(raw []byte) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		tm.mu.Lock()
		ok := cond(tm.raw)
		exited, changed, n := tm.exited, tm.changed, len(tm.raw)
		tm.mu.Unlock()
		if ok {
			return nil
		}
		if exited {
			return fmt.Errorf("program exited (%v) after %d bytes of output before the condition held", tm.waitErr, n)
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
// the output so far (see TmuxScreen), polling every 100 ms. On timeout the
// error shows the last screen.
func (tm *Term) WaitScreen(timeout time.Duration, cond func(screen string) bool) (string, error) {
	deadline := time.Now().Add(timeout)
	last := -1
	screen := ""
	for {
		raw := tm.Raw()
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
		if tm.Exited() && len(tm.Raw()) == last {
			return screen, fmt.Errorf("program exited before the screen condition held; screen:\n%s", screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Close kills the program's process group, closes the terminal and waits
// for the program to be reaped. It is safe to call more than once.
func (tm *Term) Close() {
	tm.closeOnce.Do(func() {
		if p := tm.cmd.Process; p != nil {
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		}
		select {
		case <-tm.done:
		case <-time.After(5 * time.Second):
			// The reader is stuck: closing the master ends it.
		}
		_ = tm.ptmx.Close()
		<-tm.done
	})
}

// Done is closed when the program has exited and its output was read.
func (tm *Term) Done() <-chan struct{} { return tm.done }

// WriteRaw saves everything written so far to path.
func (tm *Term) WriteRaw(path string) error {
	if err := os.WriteFile(path, tm.Raw(), 0o644); err != nil {
		return fmt.Errorf("save terminal output: %w", err)
	}
	return nil
}

var _ io.Writer = (*Term)(nil)

// ReadyQuiet is how long the output must stay unchanged before WaitReady
// trusts a ready screen: Gemini CLI draws its input row before it reads
// input, and an early paste plus Enter arrive together and become a
// newline.
const ReadyQuiet = 500 * time.Millisecond

// WaitReady waits until the output has been quiet for ReadyQuiet and the
// tmux-rendered screen satisfies ready (e.g. ClaudeReady), and returns that
// screen. On timeout the error shows the last screen.
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
		s, err := RenderScreen(tm.Raw(), cols, rows)
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

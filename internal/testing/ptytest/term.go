// Package ptytest plays the human's terminal in tests: it starts a program
// on a real pseudo-terminal that the test controls, types, pastes and
// submits text, resizes, sends signals, reads everything the program wrote,
// waits for output or for a screen rendered by tmux (the reference model of
// a terminal), and checks the terminal's mode before and after.
//
// It is the one terminal of the test suite: internal/testing/agenttest builds the
// agent CLIs' commands and starts them here.
package ptytest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Options configures Start and New. Zero values mean 80x24, the test's
// environment and working directory.
type Options struct {
	Cols, Rows int
	// Env is the complete environment (nil: the test's own).
	Env []string
	// Dir is the working directory (empty: the test's own).
	Dir string
	// AnswerQueries makes the terminal answer the queries TUIs send at
	// start (primary device attributes and cursor position) the way a
	// terminal would. None of the agent CLIs needs it.
	AnswerQueries bool
}

// Term is a program running as the session leader of a real
// pseudo-terminal owned by the test. Everything it writes is kept (Output,
// Raw). Its methods are safe for concurrent use.
type Term struct {
	t    testing.TB // nil for a Term from New outside a test
	cmd  *exec.Cmd
	ptmx *os.File // the terminal's screen and keyboard side

	initial Mode // the terminal's mode before the program started

	mu      sync.Mutex
	tty     *os.File // the program's side, kept open to read its mode; nil once closed
	out     []byte
	cols    int
	rows    int
	changed chan struct{} // closed and replaced when out grows or the program exits
	exited  bool
	code    int
	waitErr error

	done      chan struct{} // closed when the program has exited and its output was read
	read      chan struct{} // closed when the output reader has ended
	closeOnce sync.Once
}

// Start runs argv as the session leader of a new pseudo-terminal of the
// given size, the way a terminal emulator starts a shell. The program's
// process group is killed and reaped when the test ends (Close).
func Start(t testing.TB, opts Options, argv ...string) *Term {
	t.Helper()
	tm, err := New(opts, argv...)
	if err != nil {
		t.Fatal(err)
	}
	tm.t = t
	t.Cleanup(tm.Close)
	return tm
}

// New is Start for programs outside tests (the recorder): the caller must
// Close the Term.
func New(opts Options, argv ...string) (*Term, error) {
	if len(argv) == 0 {
		return nil, errors.New("start in pty: empty argv")
	}
	if opts.Cols <= 0 {
		opts.Cols = 80
	}
	if opts.Rows <= 0 {
		opts.Rows = 24
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("start %s: open pty: %w", argv[0], err)
	}
	fail := func(err error) (*Term, error) {
		tty.Close()
		ptmx.Close()
		return nil, fmt.Errorf("start %s in pty: %w", argv[0], err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(opts.Cols), Rows: uint16(opts.Rows)}); err != nil {
		return fail(fmt.Errorf("size: %w", err))
	}
	initial, err := readMode(tty)
	if err != nil {
		return fail(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = opts.Env, opts.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	tm := &Term{cmd: cmd, ptmx: ptmx, tty: tty, initial: initial, cols: opts.Cols, rows: opts.Rows,
		changed: make(chan struct{}), done: make(chan struct{}), read: make(chan struct{})}
	go tm.readLoop(opts.AnswerQueries)
	go tm.reap()
	return tm, nil
}

// readLoop copies the program's output until the terminal is closed.
func (tm *Term) readLoop(answer bool) {
	defer close(tm.read)
	buf := make([]byte, 64<<10)
	for {
		n, err := tm.ptmx.Read(buf)
		if n > 0 {
			tm.mu.Lock()
			tm.out = append(tm.out, buf[:n]...)
			tm.notifyLocked()
			tm.mu.Unlock()
			if answer {
				tm.answer(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// reap waits for the program, then for its last output to be read, and
// records the exit. The test keeps the program's side of the terminal
// open (to read its mode), so the reader never sees an end of file; the
// output is read once the terminal holds no unread bytes.
func (tm *Term) reap() {
	err := tm.cmd.Wait()
	tm.drain()
	tm.mu.Lock()
	tm.exited = true
	tm.waitErr = err
	tm.code = exitCode(tm.cmd.ProcessState)
	tm.notifyLocked()
	tm.mu.Unlock()
	close(tm.done)
}

// drain waits up to 2 s until the terminal holds no unread output and the
// output kept has not grown across two checks.
func (tm *Term) drain() {
	deadline := time.Now().Add(2 * time.Second)
	last, stable := -1, 0
	for stable < 2 && time.Now().Before(deadline) {
		select {
		case <-tm.read:
			return
		default:
		}
		n := tm.OutputLen()
		if pending, err := ioctlInt(tm.ptmx, ioctlInQueue); err != nil || pending > 0 || n != last {
			stable = 0
		} else {
			stable++
		}
		last = n
		time.Sleep(5 * time.Millisecond)
	}
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func (tm *Term) notifyLocked() {
	close(tm.changed)
	tm.changed = make(chan struct{})
}

// Pid returns the program's process id (also its process group id).
func (tm *Term) Pid() int { return tm.cmd.Process.Pid }

// Size returns the terminal's current size.
func (tm *Term) Size() (cols, rows int) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.cols, tm.rows
}

// Resize changes the terminal's window size; the kernel sends the
// foreground job SIGWINCH. An error also fails the Term's test.
func (tm *Term) Resize(cols, rows int) error {
	if err := pty.Setsize(tm.ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		err = fmt.Errorf("resize pty to %dx%d: %w", cols, rows, err)
		if tm.t != nil {
			tm.t.Error(err)
		}
		return err
	}
	tm.mu.Lock()
	tm.cols, tm.rows = cols, rows
	tm.mu.Unlock()
	return nil
}

// Signal sends sig to the program.
func (tm *Term) Signal(sig syscall.Signal) {
	tm.helper()
	if err := syscall.Kill(tm.cmd.Process.Pid, sig); err != nil {
		tm.fatalf("signal %v: %v", sig, err)
	}
}

// Exited reports whether the program has exited (and its output was read).
func (tm *Term) Exited() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.exited
}

// Done is closed when the program has exited and its output was read.
func (tm *Term) Done() <-chan struct{} { return tm.done }

// Wait waits up to timeout for the program to exit and returns its exit
// code (128+n for signal n). It fails the test on timeout.
func (tm *Term) Wait(timeout time.Duration) int {
	tm.helper()
	select {
	case <-tm.done:
	case <-time.After(timeout):
		tm.fatalf("program still running after %v; output so far:\n%q", timeout, lastBytes(tm.Output(), 2000))
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.code
}

// Close kills the program's process group, waits for it to be reaped and
// closes the terminal. It is safe to call more than once.
func (tm *Term) Close() {
	tm.closeOnce.Do(func() {
		if !tm.Exited() {
			_ = syscall.Kill(-tm.cmd.Process.Pid, syscall.SIGKILL)
		}
		<-tm.done
		tm.mu.Lock()
		_ = tm.tty.Close()
		tm.tty = nil
		tm.mu.Unlock()
		// The reader ends when no process holds the program's side any
		// more; a stray one in another process group would keep it.
		select {
		case <-tm.read:
		case <-time.After(5 * time.Second):
		}
		_ = tm.ptmx.Close()
	})
}

// helper marks the caller as a test helper when the Term has a test.
func (tm *Term) helper() {
	if tm.t != nil {
		tm.t.Helper()
	}
}

// fatalf fails the test, or panics for a Term without one.
func (tm *Term) fatalf(format string, args ...any) {
	if tm.t != nil {
		tm.t.Helper()
		tm.t.Fatalf(format, args...)
	}
	panic(fmt.Sprintf(format, args...))
}

func lastBytes(p []byte, n int) []byte {
	if len(p) > n {
		return p[len(p)-n:]
	}
	return p
}

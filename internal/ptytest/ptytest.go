// Package ptytest plays the human's terminal in tests: it starts a program
// on a real pseudo-terminal that the test controls, types keys, resizes,
// sends signals, reads everything the program wrote, and checks the
// terminal's mode before and after.
package ptytest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/relayhq/relay/internal/agenttest"
	"golang.org/x/sys/unix"
)

// Term is a program running on a pseudo-terminal owned by the test.
type Term struct {
	t    testing.TB
	cmd  *exec.Cmd
	ptmx *os.File // the terminal's screen and keyboard side
	tty  *os.File // the program's side, kept open to read its mode

	initial Mode // the terminal's mode before the program started

	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{} // closed when the program has exited
	code int
	read chan struct{} // closed when the output reader has ended
}

// Options configures Start. Zero values mean 80x24 and the test's env.
type Options struct {
	Cols, Rows int
	Env        []string
	Dir        string
}

// Start runs argv as the session leader of a new pseudo-terminal of the
// given size, the way a terminal emulator starts a shell. It is killed and
// reaped when the test ends.
func Start(t testing.TB, opts Options, argv ...string) *Term {
	t.Helper()
	if opts.Cols == 0 {
		opts.Cols, opts.Rows = 80, 24
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(opts.Cols), Rows: uint16(opts.Rows)}); err != nil {
		t.Fatalf("size pty: %v", err)
	}
	initial, err := unix.IoctlGetTermios(int(tty.Fd()), ioctlGetTermios)
	if err != nil {
		t.Fatalf("read terminal mode: %v", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = opts.Env, opts.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	tm := &Term{t: t, cmd: cmd, ptmx: ptmx, tty: tty, initial: Mode{*initial}, done: make(chan struct{}), read: make(chan struct{})}
	go tm.readLoop()
	go func() {
		err := cmd.Wait()
		tm.mu.Lock()
		tm.code = exitCode(cmd.ProcessState, err)
		tm.mu.Unlock()
		close(tm.done)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.done:
		default:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-tm.done
		}
		tm.tty.Close()
		tm.ptmx.Close()
		<-tm.read
	})
	return tm
}

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func (tm *Term) readLoop() {
	defer close(tm.read)
	buf := make([]byte, 64<<10)
	for {
		n, err := tm.ptmx.Read(buf)
		if n > 0 {
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// Pid returns the program's process id.
func (tm *Term) Pid() int { return tm.cmd.Process.Pid }

// Type writes keys as the human would.
func (tm *Term) Type(s string) {
	tm.t.Helper()
	if _, err := tm.ptmx.Write([]byte(s)); err != nil {
		tm.t.Fatalf("type %q: %v", s, err)
	}
}

// Write writes raw bytes to the program's input.
func (tm *Term) Write(p []byte) (int, error) { return tm.ptmx.Write(p) }

// Resize changes the terminal's window size; the kernel sends the
// foreground job SIGWINCH.
func (tm *Term) Resize(cols, rows int) {
	tm.t.Helper()
	if err := pty.Setsize(tm.ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		tm.t.Fatalf("resize: %v", err)
	}
}

// Signal sends sig to the program.
func (tm *Term) Signal(sig syscall.Signal) {
	tm.t.Helper()
	if err := syscall.Kill(tm.cmd.Process.Pid, sig); err != nil {
		tm.t.Fatalf("signal %v: %v", sig, err)
	}
}

// Output returns a copy of everything the program wrote so far.
func (tm *Term) Output() []byte {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return bytes.Clone(tm.out.Bytes())
}

// OutputLen returns how many bytes the program wrote so far.
func (tm *Term) OutputLen() int {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.Len()
}

// WaitOutput polls until the output contains want, or fails the test after
// timeout, showing the end of the output.
func (tm *Term) WaitOutput(want string, timeout time.Duration) {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := tm.Output()
		if bytes.Contains(out, []byte(want)) {
			return
		}
		if time.Now().After(deadline) {
			tail := out
			if len(tail) > 2000 {
				tail = tail[len(tail)-2000:]
			}
			tm.t.Fatalf("output has no %q after %v; last bytes:\n%q", want, timeout, tail)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ErrRunning is returned by ExitCode while the program runs.
var ErrRunning = errors.New("still running")

// Wait waits up to timeout for the program to exit and returns its exit
// code (128+n for signal n).
func (tm *Term) Wait(timeout time.Duration) int {
	tm.t.Helper()
	select {
	case <-tm.done:
	case <-time.After(timeout):
		tm.t.Fatalf("program still running after %v; output so far:\n%q", timeout, lastBytes(tm.Output(), 2000))
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.code
}

// Exited reports whether the program has exited.
func (tm *Term) Exited() bool {
	select {
	case <-tm.done:
		return true
	default:
		return false
	}
}

func lastBytes(p []byte, n int) []byte {
	if len(p) > n {
		return p[len(p)-n:]
	}
	return p
}

// Mode is the terminal's line discipline settings, for comparing before
// and after.
type Mode struct{ unix.Termios }

// Mode returns the terminal's current mode.
func (tm *Term) Mode() Mode {
	tm.t.Helper()
	tio, err := unix.IoctlGetTermios(int(tm.tty.Fd()), ioctlGetTermios)
	if err != nil {
		tm.t.Fatalf("read terminal mode: %v", err)
	}
	return Mode{*tio}
}

// InitialMode returns the terminal's mode from before the program started.
func (tm *Term) InitialMode() Mode { return tm.initial }

// Raw reports whether the mode is raw (no echo, no line editing).
func (m Mode) Raw() bool { return m.Lflag&(unix.ECHO|unix.ICANON) == 0 }

// String shows the flags, for failure messages.
func (m Mode) String() string {
	return fmt.Sprintf("iflag=%#o oflag=%#o cflag=%#o lflag=%#o", m.Iflag, m.Oflag, m.Cflag, m.Lflag)
}

// Screen renders the output on a terminal of the given size with tmux and
// returns what tmux shows, row by row (tmux is the reference model). It is
// agenttest.TmuxScreen, the one tmux renderer of the tests.
func Screen(t testing.TB, out []byte, cols, rows int) string {
	t.Helper()
	return agenttest.TmuxScreen(t, out, cols, rows)
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// term is one process run with a pseudo-terminal as its controlling
// terminal, stdin, stdout and stderr: the human's terminal, as a person
// would run it. The bench reads everything it shows, as a terminal
// emulator would, and can look for text in it.
type term struct {
	cmd  *exec.Cmd
	ptmx *os.File
	done chan struct{} // closed when the process was waited for
	read chan struct{} // closed when the terminal's output ended

	mu          sync.Mutex
	n           int64         // bytes shown
	crs         int64         // carriage returns shown: a spinner's frames
	first, last time.Time     // when the first and the last bytes were read
	keep        bool          // keep what was shown (else only count it)
	shown       bytes.Buffer  // what was shown, when keep
	wake        chan struct{} // pinged on new output
	err         error         // the wait's error
}

// startTerm starts argv in a new session with a new pty (120×40) as its
// controlling terminal. keep keeps the output for find.
func startTerm(argv, env []string, dir string, keep bool) (*term, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open pty: %w", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		ptmx.Close()
		tty.Close()
		return nil, fmt.Errorf("pty size: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// Setctty with Setsid makes the pty the session's controlling terminal,
	// with the process's group in the foreground: a terminal in front of a
	// person.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		ptmx.Close()
		tty.Close()
		return nil, fmt.Errorf("start %v: %w", argv, err)
	}
	tty.Close()
	t := &term{cmd: cmd, ptmx: ptmx, done: make(chan struct{}), read: make(chan struct{}), keep: keep, wake: make(chan struct{}, 1)}
	go t.readAll()
	go func() {
		err := cmd.Wait()
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
		close(t.done)
	}()
	return t, nil
}

// readAll reads the terminal until its last writer is gone (EIO on Linux).
func (t *term) readAll() {
	defer close(t.read)
	buf := make([]byte, 64<<10)
	for {
		n, err := t.ptmx.Read(buf)
		if n > 0 {
			now := time.Now()
			t.mu.Lock()
			if t.n == 0 {
				t.first = now
			}
			t.last = now
			t.n += int64(n)
			t.crs += int64(bytes.Count(buf[:n], []byte{'\r'}))
			if t.keep {
				t.shown.Write(buf[:n])
			}
			t.mu.Unlock()
			select {
			case t.wake <- struct{}{}:
			default:
			}
		}
		if err != nil {
			return
		}
	}
}

// frames returns how many carriage returns the terminal showed so far:
// under a spinner, its frames.
func (t *term) frames() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.crs
}

// bytesShown returns how many bytes the terminal showed so far.
func (t *term) bytesShown() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// flow returns how long the output took from its first byte to its last:
// the pass-through alone, without the command's start and exit.
func (t *term) flow() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last.Sub(t.first)
}

// waitFor waits until the output holds s, up to timeout.
func (t *term) waitFor(s string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	from := 0 // what was searched already, less a match's length
	for {
		t.mu.Lock()
		b := t.shown.Bytes()
		ok := bytes.Contains(b[from:], []byte(s))
		from = max(0, len(b)-len(s))
		t.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-t.wake:
		case <-t.read:
			return fmt.Errorf("%q never shown: the terminal closed", s)
		case <-deadline.C:
			return fmt.Errorf("%q not shown after %v", s, timeout)
		}
	}
}

// wait waits for the process and its output, up to timeout, and returns
// its exit error.
func (t *term) wait(timeout time.Duration) error {
	select {
	case <-t.done:
	case <-time.After(timeout):
		t.kill()
		return errors.New("did not exit in time: killed")
	}
	select {
	case <-t.read:
	case <-time.After(2 * time.Second):
	}
	t.ptmx.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// stop ends the process with SIGTERM (SIGKILL after 5 s).
func (t *term) stop() {
	select {
	case <-t.done:
	default:
		_ = t.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-t.done:
		case <-time.After(5 * time.Second):
			t.kill()
		}
	}
	t.ptmx.Close()
}

func (t *term) kill() {
	_ = t.cmd.Process.Kill()
	<-t.done
}

// pid is the process's id.
func (t *term) pid() int { return t.cmd.Process.Pid }

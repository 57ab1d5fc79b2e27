package wrapper

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/relayhq/relay/internal/procfs"
	"golang.org/x/sys/unix"
)

// drainAfterExit bounds how long the output loop keeps reading after the
// child exited, for when a background grandchild still holds the terminal.
const drainAfterExit = time.Second

// waitLoop reaps the child and records its exit code.
func (s *Session) waitLoop() {
	pid := s.pid
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(pid, &ws, unix.WUNTRACED, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			s.log.Error("wait for child", "err", err)
			s.status = 1
			break
		}
		if ws.Stopped() {
			// By the wrapper's own suspend (see keys) or by someone's
			// SIGSTOP; either way it is resumed with SIGCONT.
			s.log.Info("child stopped", "signal", ws.StopSignal())
			continue
		}
		if ws.Exited() {
			s.status = ws.ExitStatus()
			break
		}
		if ws.Signaled() {
			s.status = 128 + int(ws.Signal())
			break
		}
	}
	_ = s.ptmx.SetReadDeadline(time.Now().Add(drainAfterExit))
	if s.thread != nil {
		s.thread.drainBy(time.Now().Add(drainAfterExit))
	}
	close(s.exited)
}

// suspend restores the human's terminal and stops the wrapper, when it is
// a job under the human's shell; the shell's `fg` sends SIGCONT, which
// resume handles. Without job control it only resumes the child.
func (s *Session) suspend() {
	if !s.human.foreground() {
		s.continueChild()
		return
	}
	s.human.restore()
	// The shell's fg sends SIGCONT, and the signal loop resumes.
	_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
}

// resume re-enters raw mode, resends the size and continues the child.
func (s *Session) resume() {
	raw, err := s.human.enterRaw()
	if err != nil {
		s.log.Warn("raw mode on resume", "err", err)
	}
	s.log.Info("resumed", "raw", raw)
	s.syncSize()
	s.continueChild()
}

func (s *Session) continueChild() {
	_ = unix.Kill(-s.pid, unix.SIGCONT)
}

// syncSize copies the human's window size to the child.
func (s *Session) syncSize() {
	cols, rows, ok := s.human.size()
	if !ok {
		return
	}
	s.Resize(cols, rows)
}

// Resize sets the child's window size (the kernel sends it SIGWINCH).
func (s *Session) Resize(cols, rows int) {
	s.mu.Lock()
	changed := cols != s.cols || rows != s.rows
	s.cols, s.rows = cols, rows
	s.mu.Unlock()
	if err := setSize(s.ptmx, cols, rows); err != nil {
		s.log.Warn("resize child", "err", err)
		return
	}
	if changed && s.opts.OnResize != nil {
		s.opts.OnResize(cols, rows)
	}
}

// setSize sets f's window size through its raw connection. pty.Setsize
// calls f.Fd(), which races with the Close at exit (a resume or a SIGWINCH
// can arrive then) and puts the file in blocking mode, which turns off the
// read deadline that bounds the drain after the child exits.
func setSize(f *os.File, cols, rows int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
	if err != nil {
		return err
	}
	return ioErr
}

// notifySignals starts catching the signals a terminal program receives;
// they wait in the channel until watchSignals handles them.
func notifySignals() chan os.Signal {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, unix.SIGWINCH, unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGTSTP, unix.SIGCONT)
	return ch
}

// watchSignals handles the signals caught on ch (notifySignals), those that
// came before the child started first, and returns a function that stops
// handling them.
func (s *Session) watchSignals(ch chan os.Signal) (stop func()) {
	done := make(chan struct{})
	s.goSafe(func() {
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				s.onSignal(sig.(syscall.Signal))
			}
		}
	})
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

func (s *Session) onSignal(sig syscall.Signal) {
	if sig != unix.SIGWINCH {
		s.log.Info("signal", "signal", sig)
	} else if ok, dropped := s.resizeLog.allow(); ok {
		s.log.Info("signal", "signal", sig, "not_logged_since_last", dropped)
	}
	switch sig {
	case unix.SIGWINCH:
		s.syncSize()
	case unix.SIGINT, unix.SIGQUIT:
		// What the terminal would do for the key: signal the child's
		// foreground job.
		s.signalForeground(sig)
	case unix.SIGTERM, unix.SIGHUP:
		s.terminate(sig)
	case unix.SIGTSTP:
		// Stopped from outside (kill -TSTP): give the terminal back and stop.
		s.human.restore()
		_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
	case unix.SIGCONT:
		s.resume()
	}
}

// errTerm is the signal sent when the wrapper's context ends.
const errTerm = unix.SIGTERM

// inputReadWait bounds the wait, when the child is to be ended, for it to
// read the input already in its terminal and act on it (see terminate).
const inputReadWait = 2 * time.Second

// terminate forwards sig to the child and its foreground job, and kills the
// child's process group if it has not exited after the grace time.
//
// Before the signal, relay stops typing and waits (up to inputReadWait in
// all) until the child has read the lines in its terminal's input queue
// and, when relay typed something lately, until the program that read
// them is waiting again: a message typed is journaled and receipted
// delivered at its Enter, the kernel drops the lines nobody read when the
// child dies, and a program ended between its read and what it does with
// the line loses it all the same. A shell reading lines (`while read`)
// busy with the line before would otherwise die with the last message
// unread or half handled. The wait runs beside the signal loop.
func (s *Session) terminate(sig syscall.Signal) {
	go func() {
		s.input.endInjection()
		start := time.Now()
		s.waitInputRead(inputReadWait)
		if s.input.injectedWithin(inputReadWait + time.Since(start)) {
			s.waitSettled(inputReadWait - time.Since(start))
		}
		pid := s.pid
		_ = unix.Kill(-pid, sig)
		s.signalForeground(sig)
		select {
		case <-s.exited:
		case <-time.After(s.opts.KillGrace):
			s.log.Warn("child ignored signal; killing it", "signal", sig)
			_ = unix.Kill(-pid, unix.SIGKILL)
		}
	}()
}

// waitInputRead waits until the child has read every complete line of
// input in its terminal (TIOCINQ on the slave side), until it exited, or
// for max at most.
func (s *Session) waitInputRead(max time.Duration) {
	if n := waitRead(s.ptmx, max, s.exited); n > 0 {
		s.log.Warn("the child did not read its input before it was ended", "bytes", n, "wait", max)
	}
}

// settleTick paces waitSettled's questions.
const settleTick = time.Millisecond

// waitSettled waits, for max at most, until no thread of the terminal's
// foreground process group (the programs that read its input) is running:
// the program that read the last line typed is waiting again, for input
// or for a command it started, so it has acted on the line. Each thread
// of a program that took the line runs from its read until it waits
// again, so a wait that begins after the read cannot end before that.
// Without /proc it returns at once.
func (s *Session) waitSettled(max time.Duration) {
	if max <= 0 {
		return
	}
	pids, err := procfs.Group(s.foreground())
	if err != nil || len(pids) == 0 {
		return
	}
	deadline := time.Now().Add(max)
	tick := time.NewTicker(settleTick)
	defer tick.Stop()
	for {
		busy, err := procfs.Running(pids)
		if err != nil || !busy {
			return
		}
		if time.Now().After(deadline) {
			s.log.Warn("the child was still busy with its input when it was ended", "wait", max)
			return
		}
		select {
		case <-s.exited:
			return
		case <-tick.C:
		}
	}
}

// readWaitSpin and readWaitTick pace waitRead's questions: without a pause
// for the first, then one every tick.
const (
	readWaitSpin = time.Millisecond
	readWaitTick = time.Millisecond
)

// waitRead waits until the program on ptmx's terminal has read every
// complete line of input waiting for it (TIOCINQ on the slave side,
// opened from the master), until done is closed, or for max at most. It
// returns how many bytes were left unread; 0 also when it cannot tell.
func waitRead(ptmx *os.File, max time.Duration, done <-chan struct{}) int {
	rc, err := ptmx.SyscallConn()
	if err != nil {
		return 0
	}
	peer := -1
	cerr := rc.Control(func(fd uintptr) { peer, err = openPeer(int(fd)) })
	if cerr != nil || err != nil {
		return 0
	}
	defer unix.Close(peer)
	start := time.Now()
	deadline := start.Add(max)
	// The caller journals what was read as soon as this returns: the time
	// between the child's read and the return is when a killed wrapper
	// types a message twice. So the first readWaitSpin is spent asking
	// without sleeping (a child at its prompt reads within it), and only
	// a child that is slower is asked every readWaitTick.
	for time.Since(start) < readWaitSpin {
		n, err := inQueue(peer)
		if err != nil || n == 0 {
			return 0
		}
		runtime.Gosched()
	}
	tick := time.NewTicker(readWaitTick)
	defer tick.Stop()
	for {
		n, err := inQueue(peer)
		if err != nil || n == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			return n
		}
		select {
		case <-done:
			return 0
		case <-tick.C:
		}
	}
}

// signalForeground sends sig to the foreground process group of the
// child's terminal (the child itself unless it runs jobs of its own).
func (s *Session) signalForeground(sig syscall.Signal) {
	_ = unix.Kill(-s.foreground(), sig)
}

// foreground returns the foreground process group of the child's terminal
// (the child's own unless it runs jobs of its own).
func (s *Session) foreground() int {
	pgrp := s.pid
	if rc, err := s.ptmx.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if g, err := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP); err == nil && g > 0 {
				pgrp = g
			}
		})
	}
	return pgrp
}

// sendEOF passes the end of a piped stdin on to the child: its EOF
// character when it reads lines (twice after a partial line, which the first
// one only flushes). A child in raw mode reads no EOF character; it gets
// nothing.
func (s *Session) sendEOF() {
	rc, err := s.ptmx.SyscallConn()
	if err != nil {
		return
	}
	var tio *unix.Termios
	cerr := rc.Control(func(fd uintptr) {
		tio, err = unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	})
	if cerr != nil {
		// The terminal was closed meanwhile (the child exited as the
		// stdin ended): nobody is left to read the EOF.
		return
	}
	if err != nil || tio.Lflag&unix.ICANON == 0 {
		s.log.Info("stdin ended; child not in canonical mode, no EOF sent")
		return
	}
	eof := tio.Cc[unix.VEOF]
	_ = s.input.injectAlways(func(write func([]byte) error) error {
		if s.input.lastByte != '\n' && s.input.lastByte != 0 {
			if err := write([]byte{eof}); err != nil {
				return err
			}
		}
		return write([]byte{eof})
	})
}

// keys passes the human's keys to the child. One case is the wrapper's own:
// the suspend key (Ctrl-Z) while the child itself reads lines in the
// foreground of its terminal. The kernel drops that SIGTSTP, because the
// child leads a session of its own and nobody could resume it, so the
// wrapper does what the human's shell would have done: it stops the child
// and itself, and resumes both on `fg`.
func (s *Session) keys(p []byte) error {
	if s.human.isTTY {
		if susp, ok := s.suspendChar(); ok {
			for {
				i := indexByte(p, susp)
				if i < 0 {
					break
				}
				if err := s.input.human(p[:i]); err != nil {
					return err
				}
				_ = unix.Kill(s.pid, unix.SIGSTOP)
				s.suspend()
				p = p[i+1:]
			}
		}
	}
	if len(p) == 0 {
		return nil
	}
	return s.input.human(p)
}

func indexByte(p []byte, c byte) int {
	for i, b := range p {
		if b == c {
			return i
		}
	}
	return -1
}

// suspendChar returns the child terminal's suspend character when the
// kernel would turn it into a signal for the child's own process group.
func (s *Session) suspendChar() (byte, bool) {
	rc, err := s.ptmx.SyscallConn()
	if err != nil {
		return 0, false
	}
	var susp byte
	var ok bool
	_ = rc.Control(func(fd uintptr) {
		tio, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
		if err != nil || tio.Lflag&unix.ISIG == 0 || tio.Cc[unix.VSUSP] == 0 {
			return
		}
		pgrp, err := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
		if err != nil || pgrp != s.pid {
			return
		}
		susp, ok = tio.Cc[unix.VSUSP], true
	})
	return susp, ok
}

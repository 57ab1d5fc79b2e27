// Package wrapper runs an agent CLI in a pseudo-terminal that the human
// cannot tell apart from their own: every byte passes through both ways at
// once, the window size follows theirs, job control and signals behave, and
// their terminal is restored on every way out.
//
// The flow, one goroutine each:
//
//	child pty ──► output loop ──► human's screen (first, never delayed)
//	                          └─► Tap (a lossy copy for the screen model)
//	human keys ─► input loop ──┐
//	injections ────────────────┴► Input, the single writer ─► child pty
//	child exit ─► wait loop (also: child stopped by Ctrl-Z ─► suspend self)
//	signals ────► signal loop (resize, forward, job control)
package wrapper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Options configures a wrapped session. The zero value of each field means
// its default; Command is required.
type Options struct {
	// Command is the program and its arguments.
	Command []string
	// Dir is the child's working folder; empty means the wrapper's.
	Dir string
	// Env is the child's environment; nil means the wrapper's own.
	Env []string
	// Stdin is the human's keyboard side; nil means os.Stdin. When it is a
	// terminal, the wrapper puts it in raw mode while in the foreground.
	Stdin *os.File
	// Stdout is the human's screen side; nil means os.Stdout.
	Stdout io.Writer
	// Tap receives a copy of everything the child writes, after the human
	// got it. It must not block: use a *Tap.
	Tap io.Writer
	// Size is the child's window when the human has no terminal; zero
	// means 80x24.
	Cols, Rows int
	// OnResize is called with the child's new size after each change.
	OnResize func(cols, rows int)
	// OnHumanLine is called when Input.HumanLine changes: true when the
	// human starts a line, false when they submit or clear it. It runs on
	// a goroutine of its own (through Go), never holding up the human's
	// keys; calls come one at a time, in order, each with a value other than
	// the one before, and the last call gives the current state (flips in
	// quick succession may be merged while a call runs). None comes after
	// Wait returns.
	OnHumanLine func(unfinished bool)
	// HumanLineInOutput is OnHumanLine in the order of the child's output,
	// for the screen model: it is called from the Tap's reader after every
	// byte the child wrote before the human's key and before any byte it
	// wrote after (needs a Tap that has Note, as *Tap does). It must be
	// quick. Keys that type a line and submit it in one read (a paste
	// ending in Enter) give true before them and false once the child
	// has echoed their Enters (with a Tap that has NoteAfterLines), so
	// that the row holding the submitted line is the human's, as for
	// keys typed one by one.
	HumanLineInOutput func(unfinished bool)
	// Cursor gives the child's cursor position (0-based), to answer the
	// child's cursor queries when no human terminal does; nil means 0,0.
	Cursor func() (col, row int)
	// KillGrace is how long a child may take to exit after the wrapper
	// forwarded SIGTERM or SIGHUP, before it is killed; zero means 5s.
	KillGrace time.Duration
	// Logger receives the wrapper's diagnostics. It must not write to the
	// human's terminal; nil discards them.
	Logger *slog.Logger
	// Signals, when set, are the signals that end a session, caught since
	// before Start (see CatchSignals): one that arrived already makes
	// Start fail with a SignalError, without starting the child. The
	// caller stops them after Wait. Either way Start catches the signals
	// it handles before it starts the child and enters raw mode.
	Signals *Signals
}

func (o *Options) fill() {
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Cols <= 0 || o.Rows <= 0 {
		o.Cols, o.Rows = 80, 24
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// ErrNoCommand is returned by Start when Options.Command is empty.
var ErrNoCommand = errors.New("no command to wrap")

// A Session is one running child. Wait for it with Wait.
type Session struct {
	opts Options
	pid  int // the child's
	ptmx *os.File
	// fromChild reads the child's output (ptmx, raw where it can: rawio.go);
	// toHuman writes it to the human's screen (their terminal opened again
	// for raw writes, else opts.Stdout); screen closes the latter.
	fromChild io.Reader
	thread    *threadReader // reads fromChild on a thread of its own, if not nil
	toHuman   io.Writer
	screen    io.Closer
	human     *humanTerm
	input     *Input
	stdin     *stdinReader
	log       *slog.Logger

	mu         sync.Mutex
	cols, rows int

	exited   chan struct{} // closed when the child has exited
	outDone  chan struct{} // closed when the output loop has ended
	inDone   chan struct{} // closed when the input loop has ended
	status   int           // the exit code, valid after exited
	stopSigs func()

	resizeLog rateLog // SIGWINCH logged once a second at most

	floods atomic.Int64 // times the output loop left the netpoller for a flood

	outMu sync.Mutex // one write to the human's screen at a time (outputLoop, Tell)
}

// Start runs the command in a new pseudo-terminal at the human's window size.
// The human's terminal is in raw mode from here until Wait returns.
func Start(opts Options) (*Session, error) {
	opts.fill()
	if len(opts.Command) == 0 {
		return nil, ErrNoCommand
	}
	// Signals first, before the child starts and before raw mode: from
	// here on none of them ends the process with the terminal raw, and
	// each reaches the child once it runs.
	sigCh := notifySignals()
	if opts.Signals != nil {
		if sig, ok := opts.Signals.Caught(); ok {
			signal.Stop(sigCh)
			return nil, &SignalError{Signal: sig}
		}
	}
	out, _ := opts.Stdout.(*os.File)
	s := &Session{
		opts:    opts,
		human:   newHumanTerm(opts.Stdin, out),
		log:     opts.Logger,
		exited:  make(chan struct{}),
		outDone: make(chan struct{}),
		inDone:  make(chan struct{}),
	}
	s.cols, s.rows = opts.Cols, opts.Rows
	if c, r, ok := s.human.size(); ok {
		s.cols, s.rows = c, r
	}

	c, err := startChild(opts.Command, opts.Dir, opts.Env, s.cols, s.rows)
	if err != nil {
		signal.Stop(sigCh)
		return nil, fmt.Errorf("start %s: %w", opts.Command[0], err)
	}
	ptmx := c.ptmx
	s.fromChild, s.toHuman = ptmx, opts.Stdout
	if c.pollErr != nil {
		s.log.Warn("pty without the netpoller", "err", c.pollErr)
	} else {
		s.fromChild = newRawReader(ptmx) // never a blocking file: a raw read would hold the process
		s.thread = newThreadReader(ptmx)
	}
	if scr, err := humanScreen(out); err == nil {
		s.toHuman, s.screen = scr, scr
	} else if !errors.Is(err, errNoRawTerm) {
		s.log.Info("the human's screen written as it is", "why", err)
	}
	s.pid, s.ptmx = c.pid, ptmx
	s.input = newInput(ptmx, opts.OnHumanLine, s.goSafe)
	if tap, ok := opts.Tap.(interface{ Poke() }); ok {
		s.input.poke = tap.Poke
	}
	if tap, ok := opts.Tap.(interface{ Note(func()) }); ok && opts.HumanLineInOutput != nil {
		fn := opts.HumanLineInOutput
		s.input.inOutput = func(v bool) { tap.Note(func() { fn(v) }) }
		if tap, ok := opts.Tap.(interface{ NoteAfterLines(int, int, func()) }); ok {
			s.input.inOutputNow, s.input.afterEcho = fn, tap.NoteAfterLines
		}
	}
	s.log.Info("child started", "pid", c.pid, "cmd", opts.Command, "cols", s.cols, "rows", s.rows)

	if _, err := s.human.enterRaw(); err != nil {
		s.log.Warn("raw mode", "err", err)
	}
	defer s.restoreOnPanic()
	if s.stdin, err = newStdinReader(opts.Stdin); err != nil {
		s.human.close()
		if s.screen != nil {
			s.screen.Close()
		}
		signal.Stop(sigCh)
		_ = unix.Kill(c.pid, unix.SIGKILL)
		return nil, fmt.Errorf("watch stdin: %w", err)
	}
	s.stopSigs = s.watchSignals(sigCh)
	s.goSafe(s.outputLoop)
	s.goSafe(s.inputLoop)
	s.goSafe(s.waitLoop)
	if s.opts.OnResize != nil {
		// Under the lock's view: the signal loop may resize already.
		cols, rows := s.Size()
		s.opts.OnResize(cols, rows)
	}
	return s, nil
}

// Go runs fn in a goroutine that restores the human's terminal before a
// panic goes on, so a bug never leaves the terminal in raw mode. Every
// goroutine that works beside a session (scanner, bus, delivery) starts
// through it.
func (s *Session) Go(fn func()) { s.goSafe(fn) }

// RestoreTerminal puts the human's terminal back as it was before the
// session, as a panic in a goroutine started by Go does: a caller's own
// group of goroutines calls it on a panic. It is safe to call at any time.
func (s *Session) RestoreTerminal() { s.human.restore() }

func (s *Session) goSafe(fn func()) {
	go func() {
		defer s.restoreOnPanic()
		fn()
	}()
}

// restoreOnPanic, deferred, restores the human's terminal when a panic
// passes and lets the panic go on.
func (s *Session) restoreOnPanic() {
	if r := recover(); r != nil {
		s.human.restore()
		panic(r)
	}
}

// Pid returns the child's process id.
func (s *Session) Pid() int { return s.pid }

// Foreground returns the process group that holds the child's terminal
// now (tcgetpgrp on the pty): the child's own (its pid: it leads a session
// of its own) while it reads the terminal itself, another while a shell
// runs a job in the foreground (vim, less, cat). One ioctl, no /proc.
func (s *Session) Foreground() (int, error) {
	rc, err := s.ptmx.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("foreground process group: %w", err)
	}
	var pgid int
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		pgid, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
	})
	if err == nil {
		err = ioErr
	}
	if err != nil {
		return 0, fmt.Errorf("foreground process group: %w", err)
	}
	return pgid, nil
}

// Input returns the single writer of the child's stdin.
func (s *Session) Input() *Input { return s.input }

// Size returns the child's current window size.
func (s *Session) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cols, s.rows
}

// Exited is closed when the child has exited.
func (s *Session) Exited() <-chan struct{} { return s.exited }

// Gone reports whether the child has exited, even when the wrapper has not
// reaped it yet (on Linux). Exited is closed only once the goroutine that
// reaps it has run, and on the wrapper's one processor that is after the
// goroutines woken before it (a session's stages starting beside a
// command that exits at once); Gone asks the kernel. Work started for the
// child that its exit makes moot can stand down on it (issue 34).
func (s *Session) Gone() bool {
	select {
	case <-s.exited:
		return true
	default:
	}
	return exitedUnreaped(s.pid)
}

// Wait waits until the child has exited and its last byte has reached the
// human, restores the terminal and returns the child's exit code (128+n
// when signal n killed it).
func (s *Session) Wait() int {
	defer s.human.close()
	<-s.exited
	<-s.outDone
	// The terminal is restored for good before the signals lose their
	// handling: a signal now (a SIGCONT that would enter raw mode again, a
	// SIGHUP that would end the process) cannot leave it raw.
	s.human.close()
	s.stopSigs()
	s.stdin.stop()
	s.ptmx.Close()
	if s.screen != nil {
		s.screen.Close()
	}
	<-s.inDone
	s.input.notify.wait()
	s.stdin.close()
	s.log.Info("child exited", "status", s.status)
	return s.status
}

// Run starts the command, calls started (if not nil) with the session, and
// waits for the child; ctx's end is handled like SIGTERM (forwarded, then a
// kill after the grace time).
func Run(ctx context.Context, opts Options, started func(*Session)) (int, error) {
	s, err := Start(opts)
	if err != nil {
		return 0, err
	}
	if started != nil {
		started(s)
	}
	go func() {
		select {
		case <-ctx.Done():
			s.terminate(errTerm)
		case <-s.exited:
		}
	}()
	return s.Wait(), nil
}

// streamGap: chunks of output this close together are a stream.
const streamGap = 2 * time.Millisecond

// outputLoop copies the child's output to the human first, then to the tap.
func (s *Session) outputLoop() {
	defer close(s.outDone)
	var ans *answerer
	if !s.human.isTTY {
		ans = &answerer{cursor: s.opts.Cursor}
	}
	buf := make([]byte, 64<<10)
	var prev, last time.Time // when the last two chunks came
	streaming := func() bool { return last.Sub(prev) < streamGap }
	show := func(p []byte, to io.Writer) {
		s.outMu.Lock()
		_, werr := writeAll(to, p)
		s.outMu.Unlock()
		if werr != nil {
			s.log.Warn("write to human", "err", werr)
		}
	}
	tapped := func(p []byte) {
		if s.opts.Tap != nil {
			s.opts.Tap.Write(p)
		}
		if ans != nil {
			if reply := ans.scan(p); reply != nil {
				_ = s.input.answer(reply)
			}
		}
	}
	take := func(p []byte, to io.Writer) {
		prev, last = last, time.Now()
		show(p, to)
		tapped(p)
	}
	var pump pumpTo // a flood's ends, when the human's terminal is written raw
	if w, ok := s.toHuman.(rawWriter); ok {
		pump = pumpTo{fd: w.fd, mu: &s.outMu, slow: func(p []byte) { show(p, w.slow) }, tap: tapped}
	}
	raw, isRaw := s.fromChild.(rawReader)
	for {
		// Output in a stream (a flood: the last two chunks came close
		// together) is read on this goroutine's thread with raw reads and
		// poll(2) (outthread_linux.go), elsewhere with Go's ordinary
		// calls; output that comes now and then (a spinner's frames, and
		// the read that finds nothing after each) with raw ones on the
		// netpoller (rawio.go).
		if streaming() && s.thread != nil {
			// A flood, on this goroutine's thread (outthread_linux.go):
			// pumped to a terminal written raw (outpump_linux.go).
			s.floods.Add(1)
			var err error
			if pump.mu != nil {
				err = s.thread.pump(buf, pump)
			} else {
				err = s.thread.flood(buf, func(p []byte) { take(p, s.toHuman) })
			}
			if !errors.Is(err, errQuiet) {
				s.sweep(err, buf, func(p []byte) { take(p, s.toHuman) })
				return
			}
			// Frames again, until two chunks come close together. The
			// pump hands output on without take: the last chunk came now.
			prev, last = time.Time{}, time.Now()
			continue
		}
		if streaming() || !isRaw {
			from, to := s.fromChild, s.toHuman
			if streaming() {
				from, to = s.ptmx, s.opts.Stdout
			}
			n, err := from.Read(buf)
			if n > 0 {
				take(buf[:n], to)
			}
			if err != nil {
				// EIO: every copy of the pty's other side is closed.
				s.sweep(err, buf, func(p []byte) { take(p, to) })
				return
			}
			continue
		}
		// Frames, read raw until a stream starts.
		err := raw.readEach(buf, func(p []byte) bool {
			take(p, s.toHuman)
			return !streaming()
		})
		if err != nil {
			s.sweep(err, buf, func(p []byte) { take(p, s.toHuman) })
			return
		}
	}
}

// sweepMax bounds the final sweep: more than a terminal's buffers hold,
// so that a background grandchild that writes without end cannot hold the
// wrapper open through it.
const sweepMax = 1 << 20

// sweep hands to take what the child's terminal still holds when the
// drain after the child's exit ended on its deadline (err). The deadline
// bounds waiting for a background grandchild's output, but it also runs
// while the loop is blocked writing to a slow human terminal (a flood on
// a loaded machine, a paused screen), and then the child's last output is
// still in the pty, unread: it is read here without waiting, until the
// terminal is empty, so that nothing the child wrote is lost.
func (s *Session) sweep(err error, buf []byte, take func([]byte)) {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return
	}
	rc, cerr := s.ptmx.SyscallConn()
	if cerr != nil {
		return
	}
	for total := 0; total < sweepMax; {
		var n int
		var rerr error
		if cerr := rc.Control(func(fd uintptr) {
			for {
				n, rerr = unix.Read(int(fd), buf)
				if rerr != unix.EINTR {
					return
				}
			}
		}); cerr != nil || rerr != nil || n <= 0 {
			return // EAGAIN: it is empty; EIO: every writer is gone
		}
		take(buf[:n])
		total += n
	}
}

// End ends the child as a hang-up of its terminal would: SIGHUP to it and
// its foreground job, SIGKILL to its process group after the grace time.
// relay calls it when the session is refused after the child started (the
// hub refused its name).
func (s *Session) End() { s.terminate(unix.SIGHUP) }

// Tell writes line, relay's own words for the human, on a line of its own
// on the human's screen, between two reads of the child's output. The
// child does not see it; a full-screen program may draw over it later.
func (s *Session) Tell(line string) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if _, err := writeAll(s.opts.Stdout, []byte("\r\n"+line+"\r\n")); err != nil {
		s.log.Warn("write to human", "err", err)
	}
}

// pollable returns the pty's master as a file of the runtime's netpoller
// (f is closed): creack/pty leaves it in blocking mode (its ioctls call
// Fd), so each read holds a thread of its own in the kernel, and every
// chunk of output costs a hand-off between threads; a pollable file is
// read by whichever thread runs the output loop, and its read deadline
// (the drain after the child's exit) works. Its ioctls go through
// SyscallConn, never Fd, which would make it blocking again.
func pollable(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f, fmt.Errorf("dup the pty: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return f, fmt.Errorf("pty non-blocking: %w", err)
	}
	p := os.NewFile(uintptr(fd), f.Name())
	f.Close()
	return p, nil
}

func writeAll(w io.Writer, p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		n, err := w.Write(p)
		total += n
		if err != nil {
			return total, err
		}
		p = p[n:]
	}
	return total, nil
}

// inputLoop copies the human's keystrokes to the child. At the end of a
// piped stdin it passes the end on: the child's EOF character when it reads
// lines (canonical mode).
func (s *Session) inputLoop() {
	defer close(s.inDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := s.stdin.Read(buf)
		if n > 0 {
			if werr := s.keys(buf[:n]); werr != nil {
				return
			}
		}
		if errors.Is(err, io.EOF) {
			s.sendEOF()
			return
		}
		if err != nil {
			return
		}
	}
}

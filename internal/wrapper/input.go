package wrapper

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Input is the single writer of the child's stdin. The human's keystrokes
// and every injection go through it, so they can never interleave: an
// injection holds it for its whole sequence (paste, settle, Enter) while the
// human's keys wait, delayed but never lost or merged.
//
// It also follows the human's line (see lineTracker): while the human has
// typed something since their last Enter or Ctrl-C and not erased it all, HumanLine is
// true and Inject refuses, so relay never presses Enter on a line it did
// not write alone.
type Input struct {
	mu        sync.Mutex
	w         io.Writer
	lastHuman atomic.Int64 // unix nanoseconds of the last human keystroke
	// lastSubmit: unix nanoseconds of the last human Enter that submitted
	// text (ended an unfinished line).
	lastSubmit atomic.Int64
	// lastInject: unix nanoseconds of the end of relay's last injection.
	lastInject atomic.Int64
	lastByte   byte        // the last byte written, for the EOF rule
	line       lineTracker // the human's line, under mu
	draft      atomic.Bool // line.unfinished, readable without mu
	notify     *lineNotifier
	// inOutput, when set, is told of each change of the human's line at
	// once, before the keys reach the child (Options.HumanLineInOutput).
	inOutput func(unfinished bool)
	// poke, when set, is called before each write to the child: the tap
	// then holds back none of its echo (Tap.Poke).
	poke func()
	// inOutputNow is HumanLineInOutput itself, for afterEcho's calls (made
	// already in the order of the output).
	inOutputNow func(unfinished bool)
	// afterEcho, when set, has fn called in the order of the output once
	// the child has echoed lines line feeds (or maxBytes bytes): the end
	// of the echo of keys that typed a line and submitted it at once.
	afterEcho func(lines, maxBytes int, fn func())
	outGen    atomic.Uint64 // counts inOutput calls, so that a stale afterEcho is skipped
	ending    bool          // under mu: the child is being ended; Inject refuses
}

// ErrHumanLine is returned by Inject, without running its function, while
// the human has an unfinished line in the child: anything relay typed
// would join the human's text, and its Enter would submit it.
var ErrHumanLine = errors.New("the human has an unfinished line")

// ErrEnding is returned by Inject, without running its function, once the
// wrapper was told to end the child (SIGTERM, SIGHUP): nothing more is
// typed that the child might never read.
var ErrEnding = errors.New("the child is being ended")

func newInput(w io.Writer, onLine func(bool), spawn func(func())) *Input {
	return &Input{w: w, notify: newLineNotifier(onLine, spawn)}
}

func (in *Input) write(p []byte) error {
	if in.poke != nil && len(p) > 0 {
		in.poke()
	}
	for len(p) > 0 {
		n, err := in.w.Write(p)
		if n > 0 {
			in.lastByte = p[n-1]
		}
		if err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// human writes the human's keystrokes and notes when they came and what
// they did to the human's line.
func (in *Input) human(p []byte) error {
	now := time.Now().UnixNano()
	in.lastHuman.Store(now)
	in.mu.Lock()
	before := in.line.unfinished
	changed := in.line.feed(p)
	if in.line.submitted {
		in.lastSubmit.Store(now)
	}
	unfinished := in.line.unfinished
	in.draft.Store(unfinished)
	switch {
	case in.inOutput == nil:
	case changed:
		in.outGen.Add(1)
		in.inOutput(unfinished)
	case !before && !unfinished && in.line.submitted && in.afterEcho != nil && in.inOutputNow != nil:
		// One read typed a line and submitted it (a paste ending in
		// Enter): its echo comes after these keys, so the line is the
		// human's until the child has echoed the Enter, as if typed key
		// by key. (Of several lines submitted in one read, only the
		// first: the others are echoed after the first one's output.)
		g := in.outGen.Add(1)
		in.inOutput(true)
		in.afterEcho(in.line.breaks, 4*len(p)+4096, func() {
			if in.outGen.Load() == g { // else a later change of the line decides
				in.inOutputNow(false)
			}
		})
	}
	err := in.write(p)
	in.mu.Unlock()
	if changed {
		in.notify.post(unfinished)
	}
	return err
}

// answer writes a reply to one of the child's terminal queries.
func (in *Input) answer(p []byte) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.write(p)
}

// Inject runs fn with exclusive use of the child's stdin: every call of
// write goes to the child, and the human's keys wait until fn returns. Keep
// fn short (a paste, a settle time, an Enter). While the human has an
// unfinished line (HumanLine), it returns ErrHumanLine and does not run fn;
// the check is made under the writer's lock, so no key of the human's can
// slip in between it and fn.
func (in *Input) Inject(fn func(write func([]byte) error) error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.ending {
		return ErrEnding
	}
	if in.line.unfinished {
		return ErrHumanLine
	}
	defer func() { in.lastInject.Store(time.Now().UnixNano()) }()
	return fn(in.write)
}

// injectedWithin reports whether relay typed something within d.
func (in *Input) injectedWithin(d time.Duration) bool {
	last := in.lastInject.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < d
}

// WaitRead waits, up to max, until the child has read the complete lines
// waiting in its terminal's input queue, and reports whether it did (true
// also where it cannot tell). Call it from inside Inject, after the
// Enter: a line still queued when the wrapper dies is dropped with the
// terminal, so what was typed counts as read only from then on.
func (in *Input) WaitRead(max time.Duration) bool {
	f, ok := in.w.(*os.File)
	if !ok {
		return true
	}
	return waitRead(f, max, nil) == 0
}

// endInjection makes Inject refuse from now on. It waits for an injection
// under way to finish (its Enter written), so that what relay typed is in
// the terminal's queue when it returns.
func (in *Input) endInjection() {
	in.mu.Lock()
	in.ending = true
	in.mu.Unlock()
}

// ReleaseLine empties the human's line when relay cannot count it but the
// child shows it empty: while the line is unfinished, it asks empty (under
// the writer's lock, so no key slips in) and, when that says so, the line
// is empty and the change is notified as a key's would be. For a shell
// whose clean prompt is back on screen after keys relay could not follow:
// an edit it cannot count, keys typed into another program (q in less).
// It reports whether the line was released.
func (in *Input) ReleaseLine(empty func() bool) bool {
	in.mu.Lock()
	if !in.line.unfinished || !empty() {
		in.mu.Unlock()
		return false
	}
	in.line.clear()
	in.draft.Store(false)
	if in.inOutput != nil {
		in.outGen.Add(1)
		in.inOutput(false)
	}
	in.mu.Unlock()
	in.notify.post(false)
	return true
}

// injectAlways is Inject without the human-line check, for what the
// human's own input calls for (the EOF at the end of a piped stdin).
func (in *Input) injectAlways(fn func(write func([]byte) error) error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return fn(in.write)
}

// HumanLine reports whether the human has an unfinished line: keys typed
// since their last Enter or Ctrl-C that may have left text in the
// child's input line. It errs on the side of true (see lineTracker for the
// rules). While it is true, Inject refuses.
func (in *Input) HumanLine() bool { return in.draft.Load() }

// LastHuman returns when the human last typed (the zero Time if never).
func (in *Input) LastHuman() time.Time {
	ns := in.lastHuman.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// LastSubmit returns when the human last submitted text: an Enter that
// ended an unfinished line (the zero Time if never). An Enter on an empty
// line and Ctrl-C are not submits.
func (in *Input) LastSubmit() time.Time {
	ns := in.lastSubmit.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// stdinReader reads the human's stdin without blocking forever. A
// terminal is read on the netpoller, through a file description of its own
// (stdinAgain); anything else is polled together with a wake-up pipe, so
// that stop ends it at once and no goroutine is left behind after the
// child exits.
//
// A terminal is not polled: the blocking poll(2) holds the wrapper's one
// processor (GOMAXPROCS 1) until the runtime's monitor takes it back, which
// it does only on its second look, up to 20 ms after the human's last key
// when it sleeps deeply. Meanwhile nothing else of the wrapper runs: the
// child's exit was seen 15 ms late, its first output and the hub's answers
// waited as long (issue 34).
type stdinReader struct {
	f    *os.File
	own  *os.File // the terminal opened again, on the netpoller; nil: poll f
	wake [2]int
}

func newStdinReader(f *os.File) (*stdinReader, error) {
	if own := stdinAgain(f); own != nil {
		return &stdinReader{f: f, own: own}, nil
	}
	var p [2]int
	if err := wakePipe(p[:]); err != nil {
		return nil, err
	}
	return &stdinReader{f: f, wake: p}, nil
}

// errStopped ends the read loop when stop was called.
var errStopped = errors.New("stdin reader stopped")

// Read waits until stdin has data (or EOF) or stop was called.
func (r *stdinReader) Read(p []byte) (int, error) {
	if r.own != nil {
		n, err := r.own.Read(p)
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
			return n, errStopped
		}
		return n, err
	}
	fds := []unix.PollFd{
		{Fd: int32(r.f.Fd()), Events: unix.POLLIN},
		{Fd: int32(r.wake[0]), Events: unix.POLLIN},
	}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if fds[1].Revents != 0 {
			return 0, errStopped
		}
		if fds[0].Revents != 0 {
			n, err := unix.Read(int(r.f.Fd()), p)
			switch {
			case err == unix.EINTR || err == unix.EAGAIN:
				continue
			case err != nil:
				return 0, err
			case n == 0:
				return 0, io.EOF
			}
			return n, nil
		}
	}
}

func (r *stdinReader) stop() {
	if r.own != nil {
		_ = r.own.SetReadDeadline(time.Unix(1, 0))
		return
	}
	unix.Write(r.wake[1], []byte{0})
}

func (r *stdinReader) close() {
	if r.own != nil {
		r.own.Close()
		return
	}
	unix.Close(r.wake[0])
	unix.Close(r.wake[1])
}

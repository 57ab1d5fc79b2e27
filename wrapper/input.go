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
type Input struct {
	mu        sync.Mutex
	w         io.Writer
	lastHuman atomic.Int64 // unix nanoseconds of the last human keystroke
	lastByte  byte         // the last byte written, for the EOF rule
}

func newInput(w io.Writer) *Input { return &Input{w: w} }

func (in *Input) write(p []byte) error {
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

// human writes the human's keystrokes and notes when they came.
func (in *Input) human(p []byte) error {
	in.lastHuman.Store(time.Now().UnixNano())
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.write(p)
}

// answer writes a reply to one of the child's terminal queries.
func (in *Input) answer(p []byte) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.write(p)
}

// Inject runs fn with exclusive use of the child's stdin: every call of
// write goes to the child, and the human's keys wait until fn returns. Keep
// fn short (a paste, a settle time, an Enter).
func (in *Input) Inject(fn func(write func([]byte) error) error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return fn(in.write)
}

// LastHuman returns when the human last typed (the zero Time if never).
func (in *Input) LastHuman() time.Time {
	ns := in.lastHuman.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// stdinReader reads the human's stdin without blocking forever: it polls the
// file together with a wake-up pipe, so that stop ends it at once and no
// goroutine is left behind after the child exits.
type stdinReader struct {
	f    *os.File
	wake [2]int
}

func newStdinReader(f *os.File) (*stdinReader, error) {
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
	unix.Write(r.wake[1], []byte{0})
}

func (r *stdinReader) close() {
	unix.Close(r.wake[0])
	unix.Close(r.wake[1])
}

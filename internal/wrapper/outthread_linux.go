package wrapper

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// threadReader reads a flood of the child's output on the OS thread
// it runs on, outside the netpoller: raw reads while there is output,
// poll(2) for at most streamGap when the pty is empty for a moment. A
// flood through the netpoller cost Go scheduler churn (issue 34: for 27
// MB, 22k epoll_pwait, 13k futex and 25k of sysmon's short sleeps, as
// each read that found the pty empty parked the goroutine and the next
// chunk woke a thread to run it). Output that comes now and then (a
// spinner's frames) stays on the netpoller: a thread of its own waiting
// in poll(2) costs the wrapper's one processor a hand-off to sysmon and
// back for every frame (spinner child: 0.20 -> 0.31 s of CPU a minute).
//
// fd is the pty's master, non-blocking (still the netpoller's file, for
// the writes of the child's input; it is closed only after the output
// loop ended).
type threadReader struct {
	fd       int
	deadline atomic.Int64 // unix nanoseconds after which reads end; 0: none
}

// newThreadReader returns a reader of f, the pty's non-blocking master;
// nil where it cannot make one.
func newThreadReader(f *os.File) *threadReader {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if err := rc.Control(func(u uintptr) { fd = int(u) }); err != nil || fd < 0 {
		return nil
	}
	return &threadReader{fd: fd}
}

// drainBy makes the reads end at t: the child exited, and the rest of its
// output, if a grandchild holds the terminal, is bounded. A flood's poll
// waits streamGap at most, so the deadline is seen in time.
func (r *threadReader) drainBy(t time.Time) { r.deadline.Store(t.UnixNano()) }

// coalesceFrom: a read at least this long is a piece of a flood (a
// pty's master hands out at most its line discipline's 4 KB at a time),
// so the loop reads on before it writes, into the rest of the buffer;
// a shorter one (a line, an echo) is handed over at once.
const coalesceFrom = 2 << 10

// errQuiet: the flood is over, nothing came for streamGap.
var errQuiet = errors.New("no output for a while")

// flood reads into buf and calls fn with the output gathered, until
// nothing came for streamGap (errQuiet), the other side is closed
// (io.EOF, or EIO) or the deadline passed (os.ErrDeadlineExceeded).
// Consecutive long reads are handed over together, up to len(buf): one
// write and one copy to the tap for up to 64 KB of a flood instead of one
// per 4 KB. It serves a human's screen that is not a terminal written raw
// (a pipe, a file); a terminal's flood is pumped (outpump_linux.go).
func (r *threadReader) flood(buf []byte, fn func(p []byte)) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}}
	held := 0 // bytes of buf read and not yet handed over
	flush := func() {
		if held > 0 {
			fn(buf[:held])
			held = 0
		}
	}
	for {
		now := time.Now().UnixNano()
		if d := r.deadline.Load(); d != 0 && now >= d {
			flush()
			return os.ErrDeadlineExceeded
		}
		n, errno := rawRead(uintptr(r.fd), buf[held:])
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			flush()
		case errno != 0:
			flush()
			return os.NewSyscallError("read", errno) // EIO: every copy of the other side closed
		case n == 0:
			flush()
			return io.EOF
		default:
			held += n
			if n >= coalesceFrom {
				if len(buf)-held < coalesceFrom {
					flush()
				}
				continue // more of the flood is likely there: read it first
			}
			// It took all there was (a short read): hand it over and wait
			// for more instead of reading again to find the pty empty.
			// poll(2) is level-triggered, so output that came meanwhile
			// ends the wait at once.
			flush()
		}
		n, err := unix.Poll(fds, int(streamGap/time.Millisecond))
		switch {
		case err == unix.EINTR:
		case err != nil:
			return os.NewSyscallError("poll", err)
		case n == 0:
			return errQuiet
		}
	}
}

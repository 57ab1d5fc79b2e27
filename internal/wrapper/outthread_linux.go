package wrapper

import (
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// threadReader reads the child's output on an OS thread of its own,
// outside the netpoller: a raw read while there is output, a blocking
// poll(2) when there is none. A flood through the netpoller cost Go
// scheduler churn (issue 34: for 27 MB, 22k epoll_pwait, 13k futex and
// 25k of sysmon's short sleeps, as each read that found the pty empty
// parked the goroutine and the next chunk woke another thread to run
// it); here the thread that waited reads, and the only wait is the
// poll, a system call the runtime sees as one.
//
// fd is the pty's master, non-blocking (it is still the netpoller's
// file, for the writes of the child's input; it is closed only after
// the output loop ended). wake is an eventfd that ends a poll early
// when the drain's deadline is set.
type threadReader struct {
	fd       int
	wake     int
	deadline atomic.Int64 // unix nanoseconds after which reads end; 0: none
}

// newThreadReader returns a reader of f, the pty's non-blocking master,
// on a thread of its own; nil where it cannot make one (no eventfd).
func newThreadReader(f *os.File) *threadReader {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if err := rc.Control(func(u uintptr) { fd = int(u) }); err != nil || fd < 0 {
		return nil
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil
	}
	return &threadReader{fd: fd, wake: wake}
}

// drainBy makes the reads end at t (the child exited: the rest of its
// output, if a grandchild holds the terminal, is bounded), waking a
// poll in progress.
func (r *threadReader) drainBy(t time.Time) {
	r.deadline.Store(t.UnixNano())
	one := [8]byte{1}
	_, _ = unix.Write(r.wake, one[:])
}

// close closes the wake file; called once the output loop ended.
func (r *threadReader) close() { unix.Close(r.wake) }

// coalesceFrom: a read at least this long is a piece of a flood (a
// pty's master hands out at most its line discipline's 4 KB at a time),
// so the loop reads on before it writes, into the rest of the buffer;
// a shorter one (a spinner's frame, a line, an echo) is written at once.
const coalesceFrom = 2 << 10

// copyEach reads into buf and calls fn with the output gathered, until
// the other side is closed (io.EOF, or EIO) or the deadline passed
// (os.ErrDeadlineExceeded). Consecutive long reads are handed over
// together, up to len(buf): one write to the human's terminal and one
// copy to the tap for up to 64 KB of a flood instead of one per 4 KB.
func (r *threadReader) copyEach(buf []byte, fn func(p []byte)) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(r.wake), Events: unix.POLLIN}}
	held := 0 // bytes of buf read and not yet handed over
	flush := func() {
		if held > 0 {
			fn(buf[:held])
			held = 0
		}
	}
	for {
		if d := r.deadline.Load(); d != 0 && time.Now().UnixNano() >= d {
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
				continue // more of a flood is likely there: read it first
			}
			// It took all there was (a short read): hand it over and wait
			// for more instead of reading again to find the pty empty.
			// poll(2) is level-triggered, so output that came meanwhile
			// ends the wait at once.
			flush()
		}
		timeout := -1
		if d := r.deadline.Load(); d != 0 {
			timeout = int(max(0, (d-time.Now().UnixNano()+int64(time.Millisecond)-1)/int64(time.Millisecond)))
		}
		if _, err := unix.Poll(fds, timeout); err != nil && err != unix.EINTR {
			return os.NewSyscallError("poll", err)
		}
		if fds[1].Revents != 0 {
			var b [8]byte
			_, _ = unix.Read(r.wake, b[:])
		}
	}
}

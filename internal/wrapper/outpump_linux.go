package wrapper

import (
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pumpTo is where pump sends a flood: the human's terminal, reopened
// non-blocking (rawWriter.fd), and the tap.
type pumpTo struct {
	fd int         // the human's terminal, non-blocking, off the netpoller
	mu *sync.Mutex // held for each write to it (Tell writes too)
	// slow writes p in full the ordinary way, blocking as long as the
	// terminal takes (and releasing the processor meanwhile): a terminal
	// that took nothing for streamGap, or failed a raw write.
	slow func(p []byte)
	// tap hands on bytes already on the human's terminal (to the scanner's
	// tap, the answerer), in order.
	tap func(p []byte)
}

// pump copies a flood from the pty to the terminal and the tap on this
// goroutine, until nothing came for streamGap (errQuiet), the other side
// is closed (io.EOF, or EIO) or the drain's deadline passed
// (os.ErrDeadlineExceeded); every byte read is on the terminal and in the
// tap when it returns.
//
// It keeps both ends busy as `script` does, without script's write per
// read: each read is written at once while the terminal takes it, so the
// terminal's reader works on it while the next is read; while the
// terminal is full the reads go on into the rest of buf, and one write
// hands over all that gathered when the terminal has room again
// (issue 34: gathering 64 KB before each write left the terminal's
// reader idle meanwhile). All system calls are raw, and a wait for
// either end is a raw ppoll(2) that keeps the processor: a Go system call
// that blocks lets sysmon take the processor away (with GOMAXPROCS 1 at
// once, even with nothing else to run), which kept sysmon awake every
// 20 µs through a flood and handed the processor back and forth between
// threads for the scanner. Instead the goroutine yields before each wait
// (runtime.Gosched), so the scanner and the rest of the wrapper run on
// this thread, in the pipeline's idle time. A terminal that takes nothing
// for streamGap is written the ordinary, blocking way, and waits no
// longer than that hold the processor.
func (r *threadReader) pump(buf []byte, to pumpTo) error {
	// buf[:wr] is on the terminal, buf[:tp] in the tap, buf[:rd] read.
	// Each hand-over to the tap is followed by a turn for the rest of
	// the wrapper (the tap's reader, the hub's link, the human's keys) on
	// this thread: at most len(buf) goes to the tap between two turns, so
	// a reader of the tap that takes what is pending at each turn never
	// falls behind, however long the flood.
	var rd, wr, tp int
	tapUp := func() (yielded bool) {
		if tp < wr {
			to.tap(buf[tp:wr])
			tp = wr
			runtime.Gosched()
			yielded = true
		}
		if wr == rd {
			rd, wr, tp = 0, 0, 0
		}
		return yielded
	}
	finish := func(err error) error {
		if wr < rd {
			to.slow(buf[wr:rd])
			wr = rd
		}
		tapUp()
		return err
	}
	fds := [2]unix.PollFd{{Events: unix.POLLIN}, {Events: unix.POLLOUT}}
	readable, writable := true, true
	for {
		if d := r.deadline.Load(); d != 0 && time.Now().UnixNano() >= d {
			return finish(os.ErrDeadlineExceeded)
		}
		if readable && rd < len(buf) {
			n, errno := rawRead(uintptr(r.fd), buf[rd:])
			switch {
			case errno == syscall.EINTR:
				continue
			case errno == syscall.EAGAIN:
				readable = false
			case errno != 0:
				return finish(os.NewSyscallError("read", errno)) // EIO: every copy of the other side closed
			case n == 0:
				return finish(io.EOF)
			default:
				rd += n
				// A short read took all there was: wait for more rather
				// than read again to find the pty empty.
				readable = n >= coalesceFrom
			}
		}
		if writable && wr < rd {
			to.mu.Lock()
			n, errno := rawWrite(uintptr(to.fd), buf[wr:rd])
			to.mu.Unlock()
			switch {
			case errno == syscall.EINTR:
			case errno == syscall.EAGAIN:
				writable = false
			case errno != 0:
				// The terminal failed (gone): the ordinary write says how,
				// and the output loop goes on reading the child.
				return finish(errQuiet)
			default:
				wr += n
				writable = wr == rd // a part taken: the terminal is full
			}
		}
		if wr == rd && rd >= len(buf)/2 {
			tapUp() // room for the reads again
		}
		if (readable && rd < len(buf)) || (writable && wr < rd) {
			continue
		}
		// Nothing to do before one end is ready: what the terminal took
		// goes to the tap, and the rest of the wrapper has its turn.
		if !tapUp() {
			runtime.Gosched()
		}
		// An end not waited for is left out (fd -1): its hang-up would
		// end every wait at once.
		fds[0].Fd, fds[1].Fd = -1, -1
		if rd < len(buf) {
			fds[0].Fd = int32(r.fd)
		}
		if wr < rd {
			fds[1].Fd = int32(to.fd)
		}
		n, errno := rawPoll(fds[:], streamGap)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return finish(os.NewSyscallError("ppoll", errno))
		case n == 0 && wr < rd:
			// The terminal took nothing for a while (its reader is slow or
			// stopped): write the rest the ordinary way.
			to.slow(buf[wr:rd])
			wr = rd
			tapUp()
			readable, writable = true, true
			continue
		case n == 0:
			return errQuiet
		}
		// Readiness, or an error or hang-up on either end: the next read or
		// write says which.
		readable = fds[0].Revents != 0 || readable
		writable = fds[1].Revents != 0 || writable
	}
}

// rawPoll waits in ppoll(2) for fds without giving up the processor (a
// Go system call that blocks would), at most timeout, and returns how
// many are ready.
func rawPoll(fds []unix.PollFd, timeout time.Duration) (int, syscall.Errno) {
	ts := unix.NsecToTimespec(int64(timeout))
	n, _, errno := syscall.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)),
		uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	return int(n), errno
}

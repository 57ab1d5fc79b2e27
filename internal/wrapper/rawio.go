package wrapper

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// The output loop's system calls, where the platform allows (rawio_linux):
// each chunk of the child's output costs a read, a write to the human's
// terminal and the read that finds nothing more. A Go system call wakes
// the runtime's monitor thread (sysmon) whenever it sleeps, a futex and
// several short sleeps for every frame of a spinner (issue 34). Both ends
// are non-blocking files of the netpoller, so these calls never block and
// are made raw: on EAGAIN the loop parks on the netpoller as before.

// rawReader reads a non-blocking file of the netpoller with raw reads; its
// read deadline holds.
type rawReader struct{ rc syscall.RawConn }

// newRawReader returns f's raw reader, or f itself where raw calls are
// not made.
func newRawReader(f *os.File) io.Reader {
	if !rawCalls {
		return f
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	return rawReader{rc}
}

func (r rawReader) Read(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, errno = rawRead(fd, p)
			if errno != syscall.EINTR {
				return errno != syscall.EAGAIN
			}
		}
	})
	if err != nil {
		return 0, err // the deadline, or the file closed
	}
	if errno != 0 {
		return 0, os.NewSyscallError("read", errno)
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// readEach reads the file into buf and calls fn with each chunk, until
// fn returns false (nil) or a read fails (the deadline, the file closed:
// that error; the other side closed: io.EOF, or EIO). All of it is one
// RawRead: after a short read, which took all there was, it waits for the
// file's next readiness instead of reading again to find it empty
// (EAGAIN), a system call less for every frame of a spinner. That is
// safe because the netpoller is edge-triggered and every write to the
// pty's other side after the wait began is an edge: data that came
// during the read that took it leaves the file ready, and the next
// read finds nothing, as the read for EAGAIN did before.
func (r rawReader) readEach(buf []byte, fn func(p []byte) bool) error {
	var rerr error
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, errno := rawRead(fd, buf)
			switch {
			case errno == syscall.EINTR:
				continue
			case errno == syscall.EAGAIN:
				return false // wait for the next edge
			case errno != 0:
				rerr = os.NewSyscallError("read", errno)
				return true
			case n == 0:
				rerr = io.EOF
				return true
			}
			if !fn(buf[:n]) {
				return true
			}
			if n < len(buf) {
				return false // it took all there was
			}
		}
	})
	if err != nil {
		return err
	}
	return rerr
}

// rawWriter writes all of p to the human's terminal with a raw write on
// a non-blocking file of its own. It is not on the netpoller: a terminal's
// file there wakes it each time the reader drains it (an edge for every
// frame). While the terminal is full (a flood, the human pressed ^S) the
// rest goes through slow, the terminal's ordinary blocking file, as
// before: one blocking write waits and goes on where a non-blocking one
// would fail, wait and try again (pass-through of a flood: 0.7x script
// with poll(2) between raw writes).
type rawWriter struct {
	fd   int
	slow io.Writer
}

// rawWriteMax is the largest chunk written raw: a frame, a line, a
// paste's echo. A larger one is a flood's, written the ordinary way from
// the start (the terminal would not take it at once).
const rawWriteMax = 4 << 10

func (w rawWriter) Write(p []byte) (int, error) {
	if len(p) > rawWriteMax {
		return writeAll(w.slow, p)
	}
	total := 0
	for len(p) > 0 {
		n, errno := rawWrite(uintptr(w.fd), p)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			m, err := writeAll(w.slow, p)
			return total + m, err
		case errno != 0:
			return total, os.NewSyscallError("write", errno)
		}
		total += n
		p = p[n:]
	}
	return total, nil
}

// errNoRawTerm says the human's screen is not a terminal reopened here.
var errNoRawTerm = errors.New("no terminal of its own")

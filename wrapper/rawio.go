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

// rawWriter writes all of p to a non-blocking file with raw writes. It is
// not on the netpoller: a terminal's file there wakes it each time the
// reader drains it (an edge for every frame). While the terminal is full
// (the human pressed ^S, or it is slow) it waits in poll(2), an ordinary
// system call, as a blocking write did.
type rawWriter struct{ fd int }

func (w rawWriter) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		n, errno := rawWrite(uintptr(w.fd), p)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno == syscall.EAGAIN:
			if err := waitWritable(w.fd); err != nil {
				return total, err
			}
			continue
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

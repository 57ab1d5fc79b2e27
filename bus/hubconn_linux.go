package bus

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawConn is a TCP connection to the hub whose reads and writes are raw
// system calls on its non-blocking socket, made from the netpoller's
// callbacks (syscall.RawConn): a call that finds the socket empty or
// full returns EAGAIN and the goroutine parks on the netpoller as the
// net package's own Read and Write do, so no call ever blocks the thread
// (relay wrap runs on one processor) and the deadlines nats.go sets hold.
// Everything else (Close, the addresses, the deadlines) is the TCP
// connection's own.
type rawConn struct {
	net.Conn
	rc syscall.RawConn
}

// rawConnOf returns c reading and writing raw, or c itself when it has
// no socket to reach.
func rawConnOf(c net.Conn) net.Conn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawConn{Conn: c, rc: rc}
}

func (c *rawConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n uintptr
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if errno != syscall.EINTR {
				return errno != syscall.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, c.opError("read", err) // the deadline, or the connection closed
	case errno != 0:
		return 0, c.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return int(n), nil
}

func (c *rawConn) Write(p []byte) (int, error) {
	var total int
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for total < len(p) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[total])), uintptr(len(p)-total))
			switch e {
			case 0:
				total += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // full: wait until it drains
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return total, c.opError("write", err)
	case errno != 0:
		return total, c.opError("write", os.NewSyscallError("write", errno))
	}
	return total, nil
}

// opError says what failed as the net package's Read and Write do, so that
// errors.Is finds os.ErrDeadlineExceeded, net.ErrClosed or the errno in it.
func (c *rawConn) opError(op string, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) {
		oe.Op = op // "raw-read": the netpoller's wait
		return oe
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

package wrapper

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// rawCalls: Linux's read and write on non-blocking files are made raw.
const rawCalls = true

func rawRead(fd uintptr, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errno
}

func rawWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	if len(p) == 0 {
		return 0, 0
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errno
}

// humanScreen returns a writer of the human's terminal out for the output
// loop: the same terminal opened again (a file description of its own, so
// that its non-blocking mode is not the shell's, which shares out's),
// written with raw calls. errNoRawTerm when out is not a terminal.
func humanScreen(out *os.File) (io.WriteCloser, error) {
	if out == nil {
		return nil, errNoRawTerm
	}
	rc, err := out.SyscallConn()
	if err != nil {
		return nil, errNoRawTerm
	}
	var path string
	cerr := rc.Control(func(fd uintptr) {
		if term.IsTerminal(int(fd)) {
			path = fmt.Sprintf("/proc/self/fd/%d", fd)
		}
	})
	if cerr != nil || path == "" {
		return nil, errNoRawTerm
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the human's terminal again: %w", err)
	}
	if !term.IsTerminal(fd) {
		unix.Close(fd)
		return nil, errNoRawTerm
	}
	return rawWriter{fd: fd, slow: out}, nil
}

// Close closes the terminal's file of the writer.
func (w rawWriter) Close() error { return unix.Close(w.fd) }

// stdinAgain returns the human's terminal in, opened again for reading (a
// file description of its own, non-blocking without touching the shell's),
// as a file of the runtime's netpoller; nil when in is not a terminal or
// cannot be opened again (stdinReader then polls in itself).
func stdinAgain(in *os.File) *os.File {
	if in == nil {
		return nil
	}
	rc, err := in.SyscallConn()
	if err != nil {
		return nil
	}
	var path string
	if rc.Control(func(fd uintptr) {
		if term.IsTerminal(int(fd)) {
			path = fmt.Sprintf("/proc/self/fd/%d", fd)
		}
	}) != nil || path == "" {
		return nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if !term.IsTerminal(fd) {
		unix.Close(fd)
		return nil
	}
	return os.NewFile(uintptr(fd), "stdin")
}

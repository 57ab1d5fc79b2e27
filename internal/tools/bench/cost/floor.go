package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// floor is the bench's reference for the spinner's figure: the least any
// Go program passing a child's output through to its terminal pays, with
// nothing else to do. It runs the spinner on a pty of its own, reads the
// pty through the runtime's netpoller (as relay does) and writes each
// chunk to its terminal, both with raw system calls; no scanner, no hub,
// no timers. It runs Go's runtime as relay wrap does: one processor
// (internal/oneproc), no GOMAXPROCS updates (main.go). The wrapper's
// figure less this one is what relay adds.
func floor() {
	runtime.GOMAXPROCS(1)
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	cmd := exec.Command(self, "-child", "spinner")
	// The spinner ends with the floor, whose end closes the pty: its
	// hang-up does not end a spinner that ignores SIGHUP (started under
	// nohup, say).
	cmd.SysProcAttr = dieWithParent(&syscall.SysProcAttr{})
	ptmx, err := pty.Start(cmd)
	if err != nil {
		fail(err)
	}
	fd, err := unix.FcntlInt(ptmx.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		fail(err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		fail(err)
	}
	f := os.NewFile(uintptr(fd), "pty")
	rc, err := f.SyscallConn()
	if err != nil {
		fail(err)
	}
	buf := make([]byte, 64<<10)
	for {
		var rerr syscall.Errno
		err := rc.Read(func(fd uintptr) bool {
			// As relay's output loop reads (wrapper.rawReader.readEach):
			// after a short read, wait for the next edge.
			n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
			switch {
			case errno == syscall.EAGAIN || errno == syscall.EINTR:
				return false
			case errno != 0 || n == 0:
				rerr = max(errno, syscall.EIO)
				return true
			}
			for p := buf[:n]; len(p) > 0; {
				w, _, werr := syscall.RawSyscall(syscall.SYS_WRITE, 1, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
				if werr != 0 && werr != syscall.EAGAIN && werr != syscall.EINTR {
					fail(werr)
				}
				if werr == 0 {
					p = p[w:]
				}
			}
			return int(n) == len(buf)
		})
		if err != nil || rerr != 0 {
			return // the spinner ended (EIO)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cost floor:", err)
	os.Exit(1)
}

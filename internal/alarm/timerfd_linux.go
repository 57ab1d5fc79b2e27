package alarm

import (
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/relayhq/relay/internal/mailbox"
)

// timerFD is a timerfd (CLOCK_MONOTONIC) in the runtime's netpoller, read
// by a goroutine of its own that notifies fire at each expiry.
type timerFD struct {
	fd   int
	f    *os.File
	done chan struct{} // closed when the reader has returned
}

// openTimerFD returns a disarmed timerFD whose expiries notify fire.
func openTimerFD(fire mailbox.Signal) (*timerFD, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("timerfd: %w", err)
	}
	t := &timerFD{fd: fd, f: f, done: make(chan struct{})}
	go t.read(rc, fire)
	return t, nil
}

// read waits in the netpoller for each expiry and notifies fire, until
// the file is closed. The read is a raw system call: a Go one would wake
// the runtime's sysmon from its sleep.
func (t *timerFD) read(rc syscall.RawConn, fire mailbox.Signal) {
	defer close(t.done)
	var n uint64
	for {
		var errno syscall.Errno
		err := rc.Read(func(fd uintptr) bool {
			_, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&n)), 8)
			return errno != syscall.EAGAIN && errno != syscall.EINTR
		})
		if err != nil {
			return // closed
		}
		if errno == 0 {
			fire.Notify()
		}
	}
}

// set arms the timer to expire d from now (rounded up to a microsecond),
// or disarms it when d is zero. Setting it discards an expiry not yet read.
// A raw system call, for the same reason as read's.
func (t *timerFD) set(d time.Duration) {
	var spec unix.ItimerSpec
	if d > 0 {
		spec.Value = unix.NsecToTimespec(int64(max(d, time.Microsecond)))
	}
	syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(t.fd), 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// close closes the file, which ends the reader, and waits for it.
func (t *timerFD) close() {
	t.f.Close()
	<-t.done
}

package wrapper

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// ioctlGetTermios is the ioctl that reads a terminal's mode (BSD: TIOCGETA).
const ioctlGetTermios = unix.TIOCGETA

// wakePipe makes a pipe whose ends are close-on-exec and non-blocking.
// macOS has no pipe2, so the flags are set after the pipe is made, under
// the fork lock (as os.Pipe does) so that no child started meanwhile
// inherits the ends.
func wakePipe(p []int) error {
	syscall.ForkLock.RLock()
	err := unix.Pipe(p)
	if err == nil {
		unix.CloseOnExec(p[0])
		unix.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return err
	}
	for _, fd := range p {
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			return err
		}
	}
	return nil
}

// errNoPeer: the slave side of a terminal cannot be opened from its master
// here; the wrapper then does not wait for typed input to be read.
var errNoPeer = errors.New("no TIOCGPTPEER on this system")

// openPeer is Linux's TIOCGPTPEER; see sys_linux.go.
func openPeer(int) (int, error) { return -1, errNoPeer }

// inQueue is Linux's TIOCINQ on the slave side; see sys_linux.go.
func inQueue(int) (int, error) { return 0, errNoPeer }

// exitedUnreaped reports whether child pid has exited before it was
// reaped; macOS is not asked (x/sys has no waitid there): false until the
// reaper has collected it (Gone then says so).
func exitedUnreaped(int) bool { return false }

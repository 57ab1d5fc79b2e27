package wrapper

import "golang.org/x/sys/unix"

// ioctlGetTermios is the ioctl that reads a terminal's mode (Linux: TCGETS).
const ioctlGetTermios = unix.TCGETS

// wakePipe makes a pipe whose ends are close-on-exec and non-blocking, in
// one call so no child started meanwhile inherits them.
func wakePipe(p []int) error {
	return unix.Pipe2(p, unix.O_CLOEXEC|unix.O_NONBLOCK)
}

// openPeer opens the terminal's slave side from its master (TIOCGPTPEER),
// without making it anyone's controlling terminal, to ask how much input
// waits in it (inQueue).
func openPeer(ptmx int) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(ptmx), uintptr(unix.TIOCGPTPEER),
		uintptr(unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// inQueue returns how many bytes of input wait in the terminal fd (the
// slave side) for its program to read them; in canonical mode, the bytes
// of complete lines only (TIOCINQ).
func inQueue(fd int) (int, error) { return unix.IoctlGetInt(fd, unix.TIOCINQ) }

// exitedUnreaped reports whether child pid has exited, whether or not it
// was reaped yet, without reaping it (waitid with WNOWAIT): the reaper
// (waitLoop) still collects its status. A pid no longer ours (reaped)
// counts as exited.
func exitedUnreaped(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err == unix.EINTR {
		return false
	}
	return err != nil || info.Signo == int32(unix.SIGCHLD)
}

package wrapper

import "golang.org/x/sys/unix"

// ioctlGetTermios is the ioctl that reads a terminal's mode (Linux: TCGETS).
const ioctlGetTermios = unix.TCGETS

// wakePipe makes a pipe whose ends are close-on-exec and non-blocking, in
// one call so no child started meanwhile inherits them.
func wakePipe(p []int) error {
	return unix.Pipe2(p, unix.O_CLOEXEC|unix.O_NONBLOCK)
}

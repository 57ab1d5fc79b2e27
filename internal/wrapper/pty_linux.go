package wrapper

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openPty opens a new pty of cols×rows: its master non-blocking, on the
// runtime's netpoller (pollErr nil), and its peer, for the child. Both are
// closed on exec. creack/pty's Open makes the same pty with os.OpenFile,
// blocking, which pollable then opens again.
func openPty(cols, rows int) (ptmx, peer *os.File, pollErr, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, nil, &os.PathError{Op: "open", Path: "/dev/ptmx", Err: err}
	}
	name, err := unlockPeer(fd)
	if err == nil {
		err = unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	}
	var pfd int
	if err == nil {
		pfd, err = unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		unix.Close(fd)
		return nil, nil, nil, fmt.Errorf("open a pty: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), os.NewFile(uintptr(pfd), name), nil, nil
}

// unlockPeer returns the name of the master fd's peer, unlocked for
// opening (ptsname and unlockpt).
func unlockPeer(fd int) (string, error) {
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		return "", fmt.Errorf("ptsname: %w", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return "", fmt.Errorf("unlockpt: %w", err)
	}
	return "/dev/pts/" + strconv.FormatUint(uint64(n), 10), nil
}

package ptytest

import "golang.org/x/sys/unix"

const (
	// ioctlGetTermios reads a terminal's mode (BSD: TIOCGETA).
	ioctlGetTermios = unix.TIOCGETA
	// ioctlInQueue reads how many bytes wait to be read: BSD's FIONREAD,
	// _IOR('f', 127, int), which x/sys/unix does not name for darwin.
	ioctlInQueue = 0x4004667f
)

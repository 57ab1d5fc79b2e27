package ptytest

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's mode (BSD: TIOCGETA).
const ioctlGetTermios = unix.TIOCGETA

package ptytest

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's mode (Linux: TCGETS).
const ioctlGetTermios = unix.TCGETS

package ptytest

import "golang.org/x/sys/unix"

const (
	// ioctlGetTermios reads a terminal's mode (Linux: TCGETS).
	ioctlGetTermios = unix.TCGETS
	// ioctlInQueue reads how many bytes wait to be read (Linux: TIOCINQ).
	ioctlInQueue = unix.TIOCINQ
)

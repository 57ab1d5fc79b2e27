//go:build !linux

package procfs

// OpenFiles is not available without /proc: it returns ErrUnsupported
// (which wraps errors.ErrUnsupported), and callers fall back to another way
// of finding the file (Codex's rollout: by folder and start time).
func OpenFiles(pid int) ([]string, error) {
	return nil, ErrUnsupported
}

// Comm is not available without /proc: it returns ErrUnsupported.
func Comm(pid int) (string, error) {
	return "", ErrUnsupported
}

// Group is not available without /proc: it returns ErrUnsupported.
func Group(pgrp int) ([]int, error) {
	return nil, ErrUnsupported
}

// Running is not available without /proc: it returns ErrUnsupported.
func Running(pids []int) (bool, error) {
	return false, ErrUnsupported
}

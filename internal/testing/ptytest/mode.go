package ptytest

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Mode is the terminal's line discipline settings, for comparing before
// and after.
type Mode struct{ unix.Termios }

// Mode returns the terminal's current mode. It fails the test once the
// terminal is closed.
func (tm *Term) Mode() Mode {
	tm.helper()
	tm.mu.Lock()
	tty := tm.tty
	var m Mode
	err := errors.New("terminal closed")
	if tty != nil {
		m, err = readMode(tty)
	}
	tm.mu.Unlock()
	if err != nil {
		tm.fatalf("%v", err)
	}
	return m
}

// InitialMode returns the terminal's mode from before the program started.
func (tm *Term) InitialMode() Mode { return tm.initial }

// Raw reports whether the mode is raw (no echo, no line editing).
func (m Mode) Raw() bool { return m.Lflag&(unix.ECHO|unix.ICANON) == 0 }

// String shows the flags, for failure messages.
func (m Mode) String() string {
	return fmt.Sprintf("iflag=%#o oflag=%#o cflag=%#o lflag=%#o", m.Iflag, m.Oflag, m.Cflag, m.Lflag)
}

// readMode reads the mode of the terminal f.
func readMode(f *os.File) (Mode, error) {
	var tio *unix.Termios
	err := control(f, func(fd int) (err error) {
		tio, err = unix.IoctlGetTermios(fd, ioctlGetTermios)
		return err
	})
	if err != nil {
		return Mode{}, fmt.Errorf("read terminal mode: %w", err)
	}
	return Mode{*tio}, nil
}

// ioctlInt runs an ioctl that returns an int on f.
func ioctlInt(f *os.File, req uint) (int, error) {
	var v int
	err := control(f, func(fd int) (err error) {
		v, err = unix.IoctlGetInt(fd, req)
		return err
	})
	return v, err
}

// control runs fn on f's descriptor through SyscallConn, which holds the
// descriptor against a concurrent Close (File.Fd does not).
func control(f *os.File, fn func(fd int) error) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

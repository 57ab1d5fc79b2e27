package wrapper

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// humanTerm is the human's terminal: the wrapper puts it in raw mode only
// while it is the terminal's foreground job, and restores it on every way out.
type humanTerm struct {
	in    *os.File // the human's keyboard side
	out   *os.File // the human's screen side, if it is a file
	isTTY bool     // in is a terminal

	mu     sync.Mutex
	orig   *term.State // the human's own mode, from before the first raw
	raw    bool        // the wrapper set raw mode and has not restored
	closed bool        // restored for good: raw mode is not entered again
}

func newHumanTerm(in *os.File, out *os.File) *humanTerm {
	h := &humanTerm{in: in, out: out}
	h.isTTY = in != nil && term.IsTerminal(int(in.Fd()))
	return h
}

// foreground reports whether this process is the terminal's foreground job,
// the only time it may change the terminal's mode without being stopped.
func (h *humanTerm) foreground() bool {
	if !h.isTTY {
		return false
	}
	pgrp, err := unix.IoctlGetInt(int(h.in.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// enterRaw switches to raw mode if the wrapper is in the foreground. It
// always sets the mode, since after a suspend the shell may have changed it
// behind the wrapper's back. It reports whether the terminal is raw.
func (h *humanTerm) enterRaw() (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || !h.foreground() {
		return false, nil
	}
	st, err := term.MakeRaw(int(h.in.Fd()))
	if err != nil {
		return false, err
	}
	if h.orig == nil {
		h.orig = st
	}
	h.raw = true
	return true, nil
}

// restore puts the terminal back in the mode it had before enterRaw. It is
// safe to call any number of times, from any goroutine.
func (h *humanTerm) restore() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.raw {
		return
	}
	_ = term.Restore(int(h.in.Fd()), h.orig)
	h.raw = false
}

// close restores the terminal for good: a later enterRaw (a SIGCONT
// handled late) leaves it as it is.
func (h *humanTerm) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.restore()
}

// size returns the human's window size, from whichever side is a terminal.
func (h *humanTerm) size() (cols, rows int, ok bool) {
	for _, f := range []*os.File{h.in, h.out} {
		if f == nil {
			continue
		}
		ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
		if err == nil && ws.Col > 0 && ws.Row > 0 {
			return int(ws.Col), int(ws.Row), true
		}
	}
	return 0, 0, false
}

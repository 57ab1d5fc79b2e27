package session

// A shell's line editor (bash's readline) shows a paste as one buffer,
// line under line, and draws it again when the Enter comes (to take the
// paste's highlight off): it moves the cursor up to the buffer's first
// row and writes it all anew. A buffer taller than the screen has its
// first rows scrolled off by then; the terminal stops the cursor at its
// top row, and the redraw lands rows too high: the echo of the last line
// is written over an older row, so that the screen never shows the typed
// line above the prompt (readiness.met) and each injection waited for the
// queue's Recheck (0.6 s) instead. Whether readline redraws depends on
// how the paste reached it, so it came and went with the machine's load:
// 5,000 messages into a wrapped bash on a 120x40 terminal took 4 s or 67 s
// (issue 34). Each injection into a shell now fits on its screen.

// pasteFits reports whether texts, pasted as one injection (a line each)
// into a shell's line editor, fit on a screen cols wide and rows high:
// its rows, a row more for the prompt before the first line, and a row
// to spare for the cursor after the last. Bytes count as columns (the
// shell's form is ASCII; a wide character takes more bytes than columns),
// and a line that fills its last row exactly counts a row more, as the
// editor moves to the next. A screen not known yet (0x0) fits anything.
func pasteFits(texts []string, cols, rows int) bool {
	if cols <= 0 || rows <= 0 {
		return true
	}
	need := 2
	for _, t := range texts {
		need += len(t)/cols + 1
		if need > rows {
			return false
		}
	}
	return true
}

// shellFits is the delivery queue's Fits for a plain shell: the
// injection fits on the child's screen as its size is now.
func (s *Session) shellFits(texts []string) bool {
	if s.child.size == nil {
		return true
	}
	cols, rows := s.child.size()
	return pasteFits(texts, cols, rows)
}

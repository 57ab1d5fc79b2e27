package screen

// Mark is a set of notes a caller keeps on rows, as bits whose meaning is
// the caller's. A mark stays with its row while the row moves (scrolling,
// inserted and deleted lines, a resize) and goes with it into the
// scrollback ([Options.OnScrollOff]); it is dropped when the row is erased
// whole (ED, EL 2, an erase or delete of every column, a row scrolled in)
// or the screen is reset. [Line.Mark] reads it.
//
// The scanner marks the rest of a line whose start it never saw (bytes
// skipped, a resize, a switch of screens in mid-line) and the rows a child
// draws while relay types into it, so that neither is read as the child's
// own line, wherever it scrolls to.
type Mark uint8

// SetPrintMark makes every row a character is printed on from now on carry
// m, until it is called again (0 stops marking). Rows only moved or erased
// do not get it.
func (s *Screen) SetPrintMark(m Mark) {
	s.printMark = m
	s.marking = s.printMark != 0 || s.cutRow != nil
}

// MarkLine marks the line the cursor is on with m: the cursor row, the rows
// above it that soft-wrap into it, and every row the text printed from here
// soft-wraps onto, until a character is printed on a row reached any other
// way (a line feed, a cursor move) or the row being marked is erased whole.
// It is for the rest of a line whose start was lost: what the program
// writes next continues a line the screen does not hold.
func (s *Screen) MarkLine(m Mark) {
	if m == 0 {
		return
	}
	s.addMark(s.cy, m)
	for y := s.cy - 1; y >= 0 && s.cur.rows[y].wrapped; y-- {
		s.addMark(y, m)
	}
	s.cutRow, s.cutMark = s.cur.rows[s.cy], m
	s.marking = true
}

// addMark adds m to row y of the current buffer.
func (s *Screen) addMark(y int, m Mark) {
	if r := s.cur.rows[y]; r.mark&m != m {
		r.mark |= m
		s.touchKeep(y) // the row's Line changes, not its text
	}
}

// markPrinted applies the marks due to row y, on which a character is about
// to be printed: the print mark, and MarkLine's mark while this is the row
// it follows (else its line has ended).
func (s *Screen) markPrinted(y int) {
	r := s.cur.rows[y]
	m := s.printMark
	if s.cutRow != nil {
		if r == s.cutRow {
			m |= s.cutMark
		} else {
			s.cutRow = nil
		}
	}
	if m != 0 {
		s.addMark(y, m)
	}
	s.marking = s.printMark != 0 || s.cutRow != nil
}

// wrapMarked carries MarkLine's mark from row prev, just soft-wrapped, onto
// the cursor row it wrapped to.
func (s *Screen) wrapMarked(prev *row) {
	if s.cutRow == prev {
		s.cutRow = s.cur.rows[s.cy]
		s.addMark(s.cy, s.cutMark)
	}
}

// unmark drops the marks of row r, erased whole; MarkLine stops following
// it.
func (s *Screen) unmark(r *row) {
	r.mark = 0
	if s.cutRow == r {
		s.cutRow = nil
		s.marking = s.printMark != 0
	}
}

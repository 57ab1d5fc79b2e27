package screen

// Row operations, written after tmux's grid_move_lines and its callers so
// that contents and soft-wrap flags end up where tmux puts them.

// moveLines moves ny rows from py to dy like tmux's grid_move_lines: rows
// moved away from and not overwritten are blanked, and the rows just above
// the destination and the source lose their soft-wrap flag.
func (s *Screen) moveLines(dy, py, ny int) {
	if ny <= 0 || py == dy {
		return
	}
	rows := s.cur.rows
	if dy != 0 {
		rows[dy-1].wrapped = false
	}
	freed := s.rowScratch[:0]
	for y := dy; y < dy+ny; y++ {
		if y < py || y >= py+ny {
			freed = append(freed, rows[y])
		}
	}
	copy(rows[dy:dy+ny], rows[py:py+ny])
	b := s.blank()
	k := 0
	for y := py; y < py+ny; y++ {
		if y < dy || y >= dy+ny {
			r := freed[k]
			k++
			blankRow(r, b)
			rows[y] = r
		}
	}
	if py != 0 && (py < dy || py >= dy+ny) {
		rows[py-1].wrapped = false
	}
	clear(freed) // no pointers kept to rows in use
	s.rowScratch = freed[:0]
	s.moved(max(min(dy, py)-1, 0), min(max(dy, py)+ny, s.rows)-1)
}

// scrollUp scrolls the region top..bot up by n rows (linefeed at the
// bottom, SU). Rows leaving the top of the whole main screen are reported
// as scrollback.
func (s *Screen) scrollUp(top, bot, n int) {
	n = min(n, bot-top+1)
	if s.cur == s.alt {
		for range n {
			s.moveLines(top, top+1, bot-top)
		}
		return
	}
	// The main screen: tmux moves rows into its history.
	report := s.opts.OnScrollOff != nil && top == 0 && bot == s.rows-1
	rows := s.cur.rows
	b := s.blank()
	for range n {
		r := rows[top]
		if report {
			s.opts.OnScrollOff(s.lineOf(r))
		}
		copy(rows[top:bot], rows[top+1:bot+1])
		blankRow(r, b)
		rows[bot] = r
	}
	s.moved(top, bot)
}

// scrollDown scrolls the region top..bot down by n rows (RI at the top,
// SD), one row at a time as tmux does.
func (s *Screen) scrollDown(top, bot, n int) {
	n = min(n, bot-top+1)
	for range n {
		s.moveLines(top+1, top, bot-top)
		s.clearRows(top, top)
	}
}

// insertLines inserts n blank rows at the cursor row (IL).
func (s *Screen) insertLines(n int) {
	cy := s.cy
	if cy < s.rupper || cy > s.rlower {
		// tmux moves the rows below down and blanks only the rows moved
		// away from: when fewer rows move than are inserted, some stay.
		n = min(n, s.rows-cy)
		s.moveLines(cy+n, cy, s.rows-cy-n)
		return
	}
	n = min(n, s.rlower+1-cy)
	left := s.rlower + 1 - cy - n
	s.moveLines(cy+n, cy, left)
	if n > left {
		s.clearRows(cy+left, cy+n-1) // rows the move did not blank
	}
}

// deleteLines removes n rows at the cursor row (DL); rows deleted are not
// scrollback.
func (s *Screen) deleteLines(n int) {
	cy := s.cy
	bot := s.rlower
	if cy < s.rupper || cy > s.rlower {
		bot = s.rows - 1
	}
	n = min(n, bot+1-cy)
	left := bot + 1 - cy - n
	s.moveLines(cy, cy+n, left)
	s.clearRows(cy+left, bot)
}

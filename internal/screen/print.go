package screen

import "slices"

// printASCII writes a run of printable ASCII at the cursor. Like tmux it
// writes the run in one go (tmux's screen_write_collect_add) unless insert
// mode is on or autowrap off, when each character goes the slow way.
func (s *Screen) printASCII(p []byte) {
	if s.insert || !s.autowrap {
		for _, b := range p {
			s.printRune(rune(b))
		}
		return
	}
	s.last = rune(p[len(p)-1])
	pen := s.pen
	for len(p) > 0 {
		if s.cx >= s.cols {
			s.wrap()
		}
		if s.marking {
			s.markPrinted(s.cy)
		}
		r := s.cur.rows[s.cy]
		x := s.cx
		n := min(len(p), s.cols-x)
		end := x + n
		if x != 0 && r.cells[x].flags&flagTail != 0 {
			// tmux's screen_write_collect_end: a run that starts on the
			// padding of a wide character erases it, and the character
			// too unless it is in column 0.
			xx := x
			for ; xx > 0 && r.cells[xx].flags&flagTail != 0; xx-- {
				r.cells[xx] = cell{}
			}
			if xx > 0 && r.cells[xx].flags&flagWide != 0 {
				r.cells[xx] = cell{}
			}
		}
		changed := s.storeASCII(r, x, p[:n], pen)
		if end < s.cols && r.cells[end].flags&flagTail != 0 {
			clearTails(r, end)
			changed = true
		}
		keep := r.plain && s.printPlain(r, x, p[:n])
		r.grow(end)
		if changed {
			if keep {
				s.touchKeep(s.cy)
			} else {
				s.touch(s.cy)
			}
		}
		p = p[n:]
		s.cx = end
	}
}

// storeASCII writes printable ASCII text in the style of pen to the cells
// of r from column x, and reports whether any cell changed.
func (s *Screen) storeASCII(r *row, x int, text []byte, pen cell) bool {
	cells := r.cells[x : x+len(text)]
	fg, bg, attr := pen.fg, pen.bg, pen.attr
	if x >= r.used {
		// Blank cells (see row.used): every one changes.
		for k, b := range text {
			cells[k] = cell{ch: rune(b), fg: fg, bg: bg, attr: attr}
		}
		return len(text) > 0
	}
	// Branch-free compare and store: diff collects every changed bit.
	var diff uint32
	for k, b := range text {
		c := &cells[k]
		diff |= uint32(c.ch) ^ uint32(b) | uint32(c.fg^fg) | uint32(c.bg^bg) |
			(uint32(c.attr)^uint32(attr))<<8 | uint32(c.flags)
		*c = cell{ch: rune(b), fg: fg, bg: bg, attr: attr}
	}
	return diff != 0
}

// printPlain copies text printed at column x of plain row r into the row's
// text and reports whether the row stays plain: every cell in one style.
// The blank cells before x and past the row's end are in the default
// style, so text printed after them in another keeps the row plain only
// when nothing was there yet and it starts in column 0.
func (s *Screen) printPlain(r *row, x int, text []byte) bool {
	pen := cell{fg: s.pen.fg, bg: s.pen.bg, attr: s.pen.attr}
	switch {
	case r.used == 0 && (x == 0 || pen == cell{}):
		r.pen = pen
	case pen == r.pen && (x <= r.used || pen == cell{}):
	default:
		r.plain = false
		return false
	}
	if len(r.text) != len(r.cells) {
		r.text = slices.Grow(r.text[:0], len(r.cells))[:len(r.cells)]
	}
	if x > r.used {
		fillSpaces(r.text[r.used:x]) // blank cells before the text
	}
	copy(r.text[x:], text)
	return true
}

// wrap moves from the pending-wrap position to the start of the next row,
// marking the row as soft-wrapped.
func (s *Screen) wrap() {
	r := s.cur.rows[s.cy]
	if !r.wrapped {
		r.wrapped = true
		s.touchKeep(s.cy)
	}
	s.linefeed()
	s.cx = 0
	if s.cutRow != nil {
		s.wrapMarked(r)
	}
}

// putCell writes a narrow character with the pen at column x of the cursor
// row, fixing up any wide character it overwrites.
func (s *Screen) putCell(x int, ch rune) {
	r := s.cur.rows[s.cy]
	c := s.pen
	c.ch = ch
	if old := r.cells[x]; old != c {
		if old.flags != 0 {
			overwrite(r, x, 1) // a narrow cell over a narrow one needs no fixing
		}
		r.cells[x] = c
		r.grow(x + 1)
		s.touch(s.cy)
	}
}

// printRune writes one character of any width at the cursor.
func (s *Screen) printRune(ch rune) {
	if ch < 0x80 {
		s.last = ch
	} else {
		s.last = -1
	}
	w := runeWidth(ch)
	if w < 0 {
		return
	}
	if w == 0 || (s.zwj && (ch >= 0x80 || !s.autowrap || s.insert)) {
		// After a joiner tmux joins any character to the previous cell.
		s.combine(ch)
		return
	}
	cols := s.cols
	if !s.autowrap && w > 1 && (w > cols || (s.cx != cols && s.cx > cols-w)) {
		return
	}
	if s.insert && s.cx < cols {
		s.insertCells(s.cx, w, DefaultColor)
	}
	if s.autowrap && s.cx > cols-w {
		s.wrap()
	}
	if s.cx > cols-w {
		if s.autowrap || w > cols {
			return
		}
		s.cx = cols - w
	}
	if s.marking {
		s.markPrinted(s.cy)
	}
	if w == 1 {
		s.putCell(s.cx, ch)
	} else {
		r := s.cur.rows[s.cy]
		x := s.cx
		c := s.pen
		c.ch, c.flags = ch, flagWide
		t := s.pen
		t.ch, t.flags = 0, flagTail
		if r.cells[x] != c || r.cells[x+1] != t {
			overwrite(r, x, 2)
			r.cells[x], r.cells[x+1] = c, t
			r.grow(x + 2)
			s.touch(s.cy)
		}
	}
	if s.autowrap || s.cx+w <= cols-1 {
		s.cx += w
	} else {
		s.cx = cols - 1
	}
}

// printNarrow is printRune for a character of width 1 from 0x80 up, with
// autowrap on, insert mode off and no joiner waiting: what is left of
// printRune's cases then.
func (s *Screen) printNarrow(ch rune) {
	s.last = -1
	if s.cx > s.cols-1 {
		s.wrap()
	}
	if s.marking {
		s.markPrinted(s.cy)
	}
	s.putCell(s.cx, ch)
	s.cx++
}

// overwrite prepares cells x.. of r for a character of width w the way
// tmux's screen_write_overwrite does: writing on the padding of a wide
// character erases the padding back to the character and the character
// itself; writing on a wide character (or with a wide one) erases the
// padding left behind to the right.
func overwrite(r *row, x, w int) {
	old := r.cells[x]
	if old.flags&flagTail != 0 {
		xx := x + 1
		for {
			xx--
			if xx <= 0 || r.cells[xx].flags&flagTail == 0 {
				break
			}
			r.cells[xx] = cell{}
		}
		r.cells[xx] = cell{}
	}
	if w != 1 || old.flags&(flagWide|flagTail) != 0 {
		clearTails(r, x+w)
	}
}

// zwj is the zero width joiner. tmux holds it back and appends it, before
// the next zero-width character, to the cell that character joins.
const zwj = '\u200d'

// combine appends a zero-width character to the one before the cursor, as
// tmux does; with nothing before it on the row it is dropped.
func (s *Screen) combine(ch rune) {
	if ch == zwj {
		s.zwj = true
		return
	}
	joined := s.zwj
	s.zwj = false
	x := min(s.cx, s.cols) - 1
	if x < 0 {
		return
	}
	r := s.cur.rows[s.cy]
	if r.cells[x].flags&flagTail != 0 && x > 0 {
		x--
		if r.cells[x].flags&flagWide == 0 {
			return
		}
	} else if r.cells[x].flags&flagWide != 0 {
		return
	}
	c := &r.cells[x]
	base := " "
	if c.ch != 0 {
		base = s.cellString(c.ch)
	}
	if joined {
		base += string(zwj)
	}
	if len(base) > 32 {
		return // bound the size of a cluster
	}
	s.addCluster(c, base+string(ch))
	r.grow(x + 1)
	s.touch(s.cy)
}

// cellString returns the text of a cell character.
func (s *Screen) cellString(ch rune) string {
	if ch >= clusterBase {
		return s.clusters[ch-clusterBase]
	}
	return string(ch)
}

// maxClusters bounds the cluster table; when full it is rebuilt from the
// cells that still use it.
const maxClusters = 1 << 14

func (s *Screen) addCluster(c *cell, text string) {
	if len(s.clusters) >= maxClusters {
		s.compactClusters()
		if len(s.clusters) >= maxClusters {
			return
		}
	}
	c.ch = clusterBase + rune(len(s.clusters))
	s.clusters = append(s.clusters, text)
}

// compactClusters drops clusters no cell refers to any more.
func (s *Screen) compactClusters() {
	old := s.clusters
	s.clusters = make([]string, 0, len(old)/2)
	remap := map[rune]rune{}
	for _, b := range []*buffer{s.main, s.alt} {
		if b == nil {
			continue
		}
		for _, r := range b.rows {
			for x := range r.cells {
				c := &r.cells[x]
				if c.ch < clusterBase {
					continue
				}
				n, ok := remap[c.ch]
				if !ok {
					n = clusterBase + rune(len(s.clusters))
					s.clusters = append(s.clusters, old[c.ch-clusterBase])
					remap[c.ch] = n
				}
				c.ch = n
			}
		}
	}
}

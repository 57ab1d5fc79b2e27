package screen

// cell is one column of a row. A zero ch is a blank (printed as a space). A
// wide character occupies its cell (flagWide) and the next (flagTail).
type cell struct {
	ch     rune // character, or clusterBase+index into Screen.clusters
	fg, bg Color
	attr   uint8
	flags  uint8
}

// Attribute bits of cell.attr.
const (
	attrBold uint8 = 1 << iota
	attrFaint
	attrItalic
	attrUnderline
	attrReverse
	attrBlink
	attrHidden
	attrStrike
)

// Bits of cell.flags.
const (
	flagWide uint8 = 1 << iota // first cell of a wide character
	flagTail                   // second cell of a wide character
)

// clusterBase marks cell characters that index Screen.clusters (a base
// character with combining marks).
const clusterBase rune = 0x200000

// row is one line of a buffer.
type row struct {
	cells   []cell
	used    int // cells from here on are all zero (blank, default colours)
	wrapped bool
	mark    Mark // the caller's notes (see Mark)
	version uint64
	// dirty says the cells changed since line was built: only then does
	// lineOf render the row again. Moving a row (scrolling, IL, DL) changes
	// its version but not its text, so a stable row is rendered once
	// however far it scrolls.
	dirty bool
	line  Line // Text and Spans last built from this row, valid unless dirty
	// plain says the row holds only ASCII (or blank) cells in one style,
	// pen, written by printASCII, with text[:used] holding their
	// characters (a blank as a space; what lies past used is stale, and
	// text may be short while the row is blank): lineOf then copies text
	// instead of reading every cell. Any other change to the cells
	// (touch) ends it until the row is blanked.
	plain bool
	pen   cell // the style of a plain row (ch unused)
	text  []byte
}

// blankRow fills r with b.
func blankRow(r *row, b cell) {
	if b != (cell{}) {
		r.text = r.text[:0] // made when printed on (printPlain)
	}
	// A plain row's text is valid up to its used cells only: printPlain
	// fills the gap when text is printed past them.
	if b == (cell{}) {
		clear(r.cells[:r.used])
		r.used = 0
	} else {
		for x := range r.cells {
			r.cells[x] = b
		}
		r.used = len(r.cells)
	}
	r.wrapped = false
	r.mark = 0
	r.dirty = true
	if b == (cell{}) {
		r.plain, r.pen = true, cell{}
	} else {
		r.plain = false
	}
}

// fillSpaces sets every byte of p to a space.
func fillSpaces(p []byte) {
	for i := range p {
		p[i] = ' '
	}
}

// grow records that cells before n may be non-zero.
func (r *row) grow(n int) {
	if n > r.used {
		r.used = n
	}
}

// buffer is the main or the alternate screen.
type buffer struct {
	rows []*row
	// moved is the version at which every row last moved at once (the
	// whole screen scrolled): a row's version is the later of its own and
	// this (see rowVersion).
	moved uint64
}

// rowVersion returns the version of r, a row of the current buffer.
func (s *Screen) rowVersion(r *row) uint64 { return max(r.version, s.cur.moved) }

func newBuffer(cols, rows int) *buffer {
	b := &buffer{rows: make([]*row, rows)}
	for i := range b.rows {
		b.rows[i] = &row{cells: make([]cell, cols), dirty: true, plain: true}
	}
	return b
}

// blank returns the cell that erasing leaves: no character, the pen's
// background (as tmux does).
func (s *Screen) blank() cell { return cell{bg: s.pen.bg} }

// clearCells blanks cells [x0, x1) of row y and records the change. Like
// tmux it leaves the other half of a wide character it cuts as it is.
func (s *Screen) clearCells(y, x0, x1 int) {
	x0, x1 = max(x0, 0), min(x1, s.cols)
	if x0 >= x1 {
		return
	}
	r := s.cur.rows[y]
	b := s.blank()
	whole := x0 == 0 && x1 == s.cols
	zero := b == (cell{})
	if zero {
		x1 = min(x1, r.used)
	}
	changed := false
	for x := x0; x < x1; x++ {
		if r.cells[x] != b {
			r.cells[x] = b
			changed = true
		}
	}
	switch {
	case !zero:
		r.grow(x1)
	case x1 >= r.used && x0 < r.used:
		r.used = x0
	}
	if whole {
		// tmux empties the row and the row above no longer wraps into it.
		if r.wrapped {
			r.wrapped = false
			changed = true
		}
		if r.mark != 0 {
			changed = true
		}
		s.unmark(r)
		if y > 0 {
			s.unwrap(y - 1)
		}
	}
	if changed {
		s.touch(y)
	}
}

// unwrap clears the soft-wrap flag of row y.
func (s *Screen) unwrap(y int) {
	if r := s.cur.rows[y]; r.wrapped {
		r.wrapped = false
		s.touchKeep(y)
	}
}

// clearRows blanks whole rows top..bot (inclusive).
func (s *Screen) clearRows(top, bot int) {
	for y := max(top, 0); y <= bot && y < s.rows; y++ {
		s.clearCells(y, 0, s.cols)
	}
}

// linefeed moves the cursor down, scrolling the region at its bottom.
func (s *Screen) linefeed() {
	switch {
	case s.cy == s.rlower:
		s.scrollUp(s.rupper, s.rlower, 1)
	case s.cy < s.rows-1:
		s.cy++
	}
}

// reverseIndex moves the cursor up, scrolling the region at its top.
func (s *Screen) reverseIndex() {
	switch {
	case s.cy == s.rupper:
		s.scrollDown(s.rupper, s.rlower, 1)
	case s.cy > 0:
		s.cy--
	}
}

// insertChars inserts n blank cells at the cursor (ICH).
func (s *Screen) insertChars(n int) {
	if s.cx > s.cols-1 {
		return
	}
	s.insertCells(s.cx, min(n, s.cols-s.cx), s.pen.bg)
}

// insertCells shifts the cells from x right by n the way tmux's
// grid_view_insert_cells does, quirks included: when nothing is left to
// move nothing changes, and when fewer cells move than are inserted, only
// as many are blanked.
func (s *Screen) insertCells(x, n int, bg Color) {
	r := s.cur.rows[s.cy]
	if x >= s.cols-1 {
		r.cells[x] = cell{bg: bg}
		r.grow(x + 1)
		s.touch(s.cy)
		return
	}
	count := s.cols - x - n
	if count <= 0 {
		return
	}
	copy(r.cells[x+n:x+n+count], r.cells[x:x+count])
	for xx := x; xx < x+count && xx < x+n; xx++ {
		r.cells[xx] = cell{bg: bg}
	}
	r.used = min(r.used+n, s.cols)
	if bg != DefaultColor {
		r.used = s.cols
	}
	s.touch(s.cy)
}

// deleteChars removes n cells at the cursor, shifting the rest left (DCH).
func (s *Screen) deleteChars(n int) {
	x := s.cx
	if x >= s.cols {
		return
	}
	n = min(n, s.cols-x)
	r := s.cur.rows[s.cy]
	copy(r.cells[x:], r.cells[x+n:])
	b := s.blank()
	for i := s.cols - n; i < s.cols; i++ {
		r.cells[i] = b
	}
	if b != (cell{}) {
		r.used = s.cols
	}
	if n == s.cols {
		// A clear of the whole row, as in clearCells.
		r.wrapped = false
		s.unmark(r)
		if s.cy > 0 {
			s.unwrap(s.cy - 1)
		}
	}
	s.touch(s.cy)
}

// clearTails blanks the padding cells of a wide character from column x
// on, after its first cell was overwritten (tmux's screen_write_overwrite).
func clearTails(r *row, x int) {
	for ; x < len(r.cells) && r.cells[x].flags&flagTail != 0; x++ {
		r.cells[x] = cell{}
	}
}

// resize cuts or pads buffer b to cols x rows and returns the new row of a
// cursor that was on row cy. Rows cut at the top of the active main screen
// are reported as scrollback.
func (b *buffer) resize(s *Screen, cols, rows, cy int, active bool) int {
	if cols != s.cols {
		for _, r := range b.rows {
			r.dirty, r.plain = true, false
			if cols < len(r.cells) {
				r.cells = r.cells[:cols]
				r.used = min(r.used, cols)
			} else {
				r.cells = append(r.cells, make([]cell, cols-len(r.cells))...)
			}
		}
	}
	for len(b.rows) > rows {
		n := len(b.rows)
		if n-1 > cy {
			b.rows = b.rows[:n-1] // as tmux: rows below the cursor go first
			continue
		}
		if active && b == s.main && s.opts.OnScrollOff != nil {
			s.opts.OnScrollOff(s.lineOf(b.rows[0]))
		}
		b.rows = b.rows[1:]
		if cy > 0 {
			cy--
		}
	}
	for len(b.rows) < rows {
		b.rows = append(b.rows, &row{cells: make([]cell, cols), dirty: true, plain: true})
	}
	return cy
}

package screen

import (
	"github.com/charmbracelet/x/ansi"
)

// maxParam caps numeric parameters (tmux rejects larger ones; a cap keeps
// loops bounded).
const maxParam = 65535

// param returns parameter i: def when missing, at least lo.
func param(ps ansi.Params, i, lo, def int) int {
	if i >= len(ps) {
		return def
	}
	v := ps[i].Param(-1)
	switch {
	case v < 0:
		return def
	case v > maxParam:
		v = maxParam
	}
	return max(v, lo)
}

// handleESC performs an escape sequence (ESC followed by one final byte,
// perhaps after an intermediate).
func (s *Screen) handleESC(cmd ansi.Cmd) {
	s.last = -1
	switch cmd.Intermediate() {
	case 0:
		switch cmd.Final() {
		case '7':
			s.saveCursor(&s.saved)
		case '8':
			s.restoreCursor(&s.saved)
		case 'D':
			s.linefeed()
		case 'E':
			s.cx = 0
			s.linefeed()
		case 'H':
			if s.cx < s.cols {
				s.tabs[s.cx] = true
			}
		case 'M':
			s.reverseIndex()
		case 'c':
			s.fullReset()
		}
	case '#':
		if cmd.Final() == '8' {
			s.alignmentTest()
		}
	}
}

// fullReset is RIS (ESC c). Like tmux it stays on the current screen.
func (s *Screen) fullReset() {
	s.pen = cell{}
	s.resetTabs()
	s.rupper, s.rlower = 0, s.rows-1
	s.autowrap, s.origin, s.insert = true, false, false
	s.cursorVisible = true
	s.bracketedPaste = false
	s.clearRows(0, s.rows-1)
	s.cx, s.cy = 0, 0
}

// alignmentTest is DECALN: fill the screen with E, reset the scroll region
// and home the cursor.
func (s *Screen) alignmentTest() {
	s.rupper, s.rlower = 0, s.rows-1
	for _, r := range s.cur.rows {
		for x := range r.cells {
			r.cells[x] = cell{ch: 'E'}
			r.plain = false
		}
		r.used = len(r.cells)
	}
	s.touchAll()
	s.cx, s.cy = 0, 0
}

func (s *Screen) saveCursor(sv *savedCursor) {
	*sv = savedCursor{
		set: true, cx: s.cx, cy: s.cy, pen: s.pen, origin: s.origin,
	}
}

func (s *Screen) restoreCursor(sv *savedCursor) {
	s.pen = sv.pen
	s.origin = sv.origin
	s.moveTo(sv.cx, sv.cy, false)
}

// moveTo places the cursor at column x, row y (-1 keeps that coordinate),
// rows relative to the scroll region in origin mode when origin is set.
func (s *Screen) moveTo(x, y int, origin bool) {
	if origin && y >= 0 && s.origin {
		if y > s.rlower-s.rupper {
			y = s.rlower
		} else {
			y += s.rupper
		}
	}
	if x >= 0 {
		s.cx = min(x, s.cols-1)
	}
	if y >= 0 {
		s.cy = min(y, s.rows-1)
	}
}

// handleCSI performs a control sequence.
func (s *Screen) handleCSI(cmd ansi.Cmd, ps ansi.Params) {
	final, prefix, inter := cmd.Final(), cmd.Prefix(), cmd.Intermediate()
	if final != 'b' {
		s.last = -1
	}
	if inter != 0 || s.seqBad {
		return // DECSCUSR, DECRQM and friends, or numbers tmux rejects
	}
	if prefix != 0 {
		if prefix == '?' {
			switch final {
			case 'h':
				s.setPrivateModes(ps, true)
			case 'l':
				s.setPrivateModes(ps, false)
			}
		}
		return
	}
	switch final {
	case '@': // ICH
		s.insertChars(param(ps, 0, 1, 1))
	case 'A': // CUU
		s.cursorUp(param(ps, 0, 1, 1))
	case 'B': // CUD
		s.cursorDown(param(ps, 0, 1, 1))
	case 'C': // CUF
		n := param(ps, 0, 1, 1)
		s.cx = max(min(s.cx+n, s.cols-1), min(s.cx, s.cols-1))
	case 'D': // CUB
		s.cx = max(min(s.cx, s.cols)-param(ps, 0, 1, 1), 0)
	case 'E': // CNL
		s.cx = 0
		s.cursorDown(param(ps, 0, 1, 1))
	case 'F': // CPL
		s.cx = 0
		s.cursorUp(param(ps, 0, 1, 1))
	case 'G', '`': // CHA, HPA
		s.moveTo(param(ps, 0, 1, 1)-1, -1, false)
	case 'H', 'f': // CUP
		s.moveTo(param(ps, 1, 1, 1)-1, param(ps, 0, 1, 1)-1, true)
	case 'J': // ED
		s.eraseDisplay(param(ps, 0, 0, 0))
	case 'K': // EL
		s.eraseLine(param(ps, 0, 0, 0))
	case 'L': // IL
		s.insertLines(param(ps, 0, 1, 1))
	case 'M': // DL
		s.deleteLines(param(ps, 0, 1, 1))
	case 'P': // DCH
		s.deleteChars(param(ps, 0, 1, 1))
	case 'S': // SU
		s.scrollUp(s.rupper, s.rlower, param(ps, 0, 1, 1))
	case 'T': // SD
		if len(ps) <= 1 {
			s.scrollDown(s.rupper, s.rlower, param(ps, 0, 1, 1))
		}
	case 'X': // ECH
		if s.cx < s.cols {
			s.clearCells(s.cy, s.cx, s.cx+param(ps, 0, 1, 1))
		}
	case 'Z': // CBT
		for n := param(ps, 0, 1, 1); n > 0 && s.cx > 0; n-- {
			s.cx = min(s.cx, s.cols) - 1
			for s.cx > 0 && !s.tabs[s.cx] {
				s.cx--
			}
		}
	case 'b': // REP
		if s.last >= 0 {
			ch := s.last
			for n := min(param(ps, 0, 1, 1), s.cols-min(s.cx, s.cols)); n > 0; n-- {
				s.printRune(ch)
			}
		}
	case 'd': // VPA
		s.moveTo(-1, param(ps, 0, 1, 1)-1, true)
	case 'g': // TBC
		switch param(ps, 0, 0, 0) {
		case 0:
			if s.cx < s.cols {
				s.tabs[s.cx] = false
			}
		case 3:
			clear(s.tabs)
		}
	case 'h', 'l': // SM, RM
		for i := range ps {
			if param(ps, i, 0, 0) == 4 {
				s.insert = final == 'h'
			}
		}
	case 'm':
		s.sgr(ps)
	case 'r': // DECSTBM
		top := param(ps, 0, 1, 1) - 1
		bot := param(ps, 1, 1, s.rows) - 1
		top, bot = min(top, s.rows-1), min(bot, s.rows-1)
		if top < bot {
			s.rupper, s.rlower = top, bot
			s.cx, s.cy = 0, 0
		}
	case 's': // SCP
		s.saveCursor(&s.saved)
	case 'u': // RCP
		s.restoreCursor(&s.saved)
	}
}

func (s *Screen) cursorUp(n int) {
	if s.cy < s.rupper {
		n = min(n, s.cy)
	} else {
		n = min(n, s.cy-s.rupper)
	}
	s.cx = min(s.cx, s.cols-1)
	s.cy -= n
}

func (s *Screen) cursorDown(n int) {
	if s.cy > s.rlower {
		n = min(n, s.rows-1-s.cy)
	} else {
		n = min(n, s.rlower-s.cy)
	}
	s.cx = min(s.cx, s.cols-1)
	s.cy += n
}

func (s *Screen) eraseDisplay(mode int) {
	switch mode {
	case 0:
		s.clearCells(s.cy, s.cx, s.cols)
		s.clearRows(s.cy+1, s.rows-1)
	case 1:
		s.clearRows(0, s.cy-1)
		s.clearCells(s.cy, 0, s.cx+1)
	case 2:
		s.clearRows(0, s.rows-1)
	}
}

func (s *Screen) eraseLine(mode int) {
	switch mode {
	case 0:
		s.clearCells(s.cy, s.cx, s.cols)
	case 1:
		s.clearCells(s.cy, 0, s.cx+1)
	case 2:
		s.clearCells(s.cy, 0, s.cols)
	}
}

func (s *Screen) setPrivateModes(ps ansi.Params, on bool) {
	for i := range ps {
		switch param(ps, i, 0, 0) {
		case 3: // DECCOLM: tmux clears and homes
			s.clearRows(0, s.rows-1)
			s.cx, s.cy = 0, 0
			if s.origin {
				s.cy = s.rupper
			}
		case 6: // DECOM
			s.origin = on
			s.cx, s.cy = 0, 0
			if on {
				s.cy = s.rupper
			}
		case 7:
			s.autowrap = on
		case 25:
			s.cursorVisible = on
		case 47, 1047:
			s.setAlt(on, false)
		case 1049:
			s.setAlt(on, true)
		case 2004:
			s.bracketedPaste = on
		case 2026:
			s.sync = on
		}
	}
}

// setAlt switches to or from the alternate screen; with saveCursor (?1049)
// the cursor is saved on the way in and, with the pen, restored on the way
// out, even when the alternate screen is not active (as tmux does).
func (s *Screen) setAlt(on, saveCursor bool) {
	if on {
		if s.cur == s.alt {
			return
		}
		s.altSaved.pen = s.pen
		if saveCursor {
			s.altSaved.set = true
			s.altSaved.cx, s.altSaved.cy = s.cx, s.cy
		}
		if s.alt == nil || len(s.alt.rows) != s.rows || len(s.alt.rows[0].cells) != s.cols {
			s.alt = newBuffer(s.cols, s.rows)
		}
		s.cur = s.alt
		s.clearRows(0, s.rows-1)
		s.touchAll()
		if s.opts.OnAltScreen != nil {
			s.opts.OnAltScreen(true)
		}
		return
	}
	if saveCursor && s.altSaved.set {
		s.cx, s.cy = s.altSaved.cx, s.altSaved.cy
		s.pen = s.altSaved.pen
	}
	switched := s.cur == s.alt
	if switched {
		s.cur = s.main
		s.touchAll()
	}
	s.cx = min(s.cx, s.cols-1)
	s.cy = min(s.cy, s.rows-1)
	if switched && s.opts.OnAltScreen != nil {
		s.opts.OnAltScreen(false)
	}
}

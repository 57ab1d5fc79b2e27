package screen

import "strings"

// CursorRow returns the text of the cursor's row split at the cursor:
// before holds the cells left of it (blank cells as spaces, so a prompt
// keeps its trailing space), after the cells from it on with trailing
// blanks trimmed. A shell waiting at its prompt with an empty line shows
// its prompt in before and nothing in after.
func (s *Screen) CursorRow() (before, after string) {
	if s.cy < 0 || s.cy >= len(s.cur.rows) {
		return "", ""
	}
	r := s.cur.rows[s.cy]
	n := usedCells(r)
	cx := min(s.cx, len(r.cells))
	var b, a []byte
	for x := 0; x < max(n, cx); x++ {
		if x < len(r.cells) && r.cells[x].flags&flagTail != 0 {
			continue
		}
		if x < cx {
			b = appendCell(b, &r.cells[x], s.clusters)
		} else {
			a = appendCell(a, &r.cells[x], s.clusters)
		}
	}
	return string(b), strings.TrimRight(string(a), " ")
}

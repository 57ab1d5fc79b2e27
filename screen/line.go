package screen

import (
	"strings"
	"unicode/utf8"
)

// Line is one row of the screen as text.
type Line struct {
	// Text holds the row's characters with trailing blanks trimmed; a wide
	// character appears once, blank cells before the end as spaces.
	Text string
	// Spans are the style runs covering Text, as byte offsets into Text.
	Spans []Span
	// Wrapped reports that the terminal auto-wrapped from this row into the
	// next (a soft wrap).
	Wrapped bool
	// Version changes whenever a cell of this row changes (and when rows
	// move, by scrolling or by inserting and deleting lines, or its Mark
	// changes).
	Version uint64
	// Mark holds the caller's notes on the row (see [Mark]).
	Mark Mark
}

// Span is a run of Text, from byte Start to byte End, in one style.
type Span struct {
	Start, End int
	Style      Style
}

// Style is how a run of text is drawn.
type Style struct {
	FG, BG                                  Color
	Bold, Faint, Italic, Underline, Reverse bool
}

func styleOf(c *cell) Style {
	return Style{
		FG: c.fg, BG: c.bg,
		Bold:      c.attr&attrBold != 0,
		Faint:     c.attr&attrFaint != 0,
		Italic:    c.attr&attrItalic != 0,
		Underline: c.attr&attrUnderline != 0,
		Reverse:   c.attr&attrReverse != 0,
	}
}

// sameStyle reports whether two cells draw with the same Style.
func sameStyle(a, b *cell) bool {
	const mask = attrBold | attrFaint | attrItalic | attrUnderline | attrReverse
	return a.fg == b.fg && a.bg == b.bg && a.attr&mask == b.attr&mask
}

// Lines returns the visible rows of the active screen, top to bottom. The
// slice and its Lines are fresh: callers may keep them.
func (s *Screen) Lines() []Line {
	out := make([]Line, s.rows)
	for y, r := range s.cur.rows {
		out[y] = s.lineOf(r)
	}
	return out
}

// Line returns visible row y (0-based) of the active screen; a row outside
// the screen is an empty Line.
func (s *Screen) Line(y int) Line {
	if y < 0 || y >= s.rows {
		return Line{}
	}
	return s.lineOf(s.cur.rows[y])
}

// lineOf returns the Line of r, built with the Screen's scratch buffers
// unless the row has not changed since it was last built. Lines share their
// (immutable) strings and spans between calls.
func (s *Screen) lineOf(r *row) Line {
	if r.line.Version == r.version && r.version != 0 {
		return r.line
	}
	l := Line{Wrapped: r.wrapped, Version: r.version, Mark: r.mark}
	n := usedCells(r)
	if n == 0 {
		r.line = l
		return l
	}
	buf, spans := s.scratch[:0], s.spans[:0]
	start := 0
	prev := &r.cells[0]
	for x := 0; x < n; x++ {
		c := &r.cells[x]
		if c.flags&flagTail != 0 {
			continue
		}
		if !sameStyle(prev, c) {
			spans = append(spans, Span{Start: start, End: len(buf), Style: styleOf(prev)})
			start = len(buf)
			prev = c
		}
		buf = appendCell(buf, c, s.clusters)
	}
	spans = append(spans, Span{Start: start, End: len(buf), Style: styleOf(prev)})
	l.Text = string(buf)
	l.Spans = append([]Span(nil), spans...)
	s.scratch, s.spans = buf, spans
	r.line = l
	return l
}

// appendCell appends the text of c to buf.
func appendCell(buf []byte, c *cell, clusters []string) []byte {
	switch {
	case c.ch == 0:
		return append(buf, ' ')
	case c.ch < utf8.RuneSelf:
		return append(buf, byte(c.ch))
	case c.ch >= clusterBase:
		return append(buf, clusters[c.ch-clusterBase]...)
	default:
		return utf8.AppendRune(buf, c.ch)
	}
}

// usedCells returns the number of cells of r up to its last non-blank one.
func usedCells(r *row) int {
	n := r.used
	for n > 0 {
		c := &r.cells[n-1]
		if c.ch != 0 && c.ch != ' ' {
			break
		}
		n--
	}
	return n
}

// Text returns the visible screen as `tmux capture-pane -p` prints it: each
// row with trailing blanks trimmed, followed by a newline.
func (s *Screen) Text() string {
	var sb strings.Builder
	var buf []byte
	for _, r := range s.cur.rows {
		buf = s.appendText(r, buf[:0])
		sb.Write(buf)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// appendText appends the text of r (trailing blanks trimmed) to buf.
func (s *Screen) appendText(r *row, buf []byte) []byte {
	n := usedCells(r)
	for x := 0; x < n; x++ {
		if c := &r.cells[x]; c.flags&flagTail == 0 {
			buf = appendCell(buf, c, s.clusters)
		}
	}
	return buf
}

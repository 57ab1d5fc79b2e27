package screen

import (
	"slices"
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

// lineOf returns the Line of r, its text built with the Screen's scratch
// buffers only when its cells changed since it was last built (see
// row.dirty). Lines share their (immutable) strings and spans between
// calls.
func (s *Screen) lineOf(r *row) Line {
	if !r.dirty {
		return Line{Text: r.line.Text, Spans: r.line.Spans, Wrapped: r.wrapped, Version: s.rowVersion(r), Mark: r.mark}
	}
	r.dirty = false
	l := Line{Wrapped: r.wrapped, Version: s.rowVersion(r), Mark: r.mark}
	n := usedCells(r)
	if n == 0 {
		r.line = l
		return l
	}
	if r.plain {
		// Its characters are in r.text already.
		l.Text = s.keepText(r.text[:n])
		l.Spans = s.keepSpan(Span{End: n, Style: styleOf(&r.pen)})
		r.line = l
		return l
	}
	if text, ok := plainText(r.cells[:n], s.scratch); ok {
		// One style, ASCII only: the common row of text.
		s.scratch = text
		l.Text = s.keepText(text)
		l.Spans = s.keepSpans(append(s.spans[:0], Span{End: len(text), Style: styleOf(&r.cells[0])}))
		r.line = l
		return l
	}
	buf, spans := slices.Grow(s.scratch[:0], n), s.spans[:0]
	start := 0
	prev := &r.cells[0]
	clusters := s.clusters
	for x := range r.cells[:n] {
		c := &r.cells[x]
		if c.fg != prev.fg || c.bg != prev.bg || c.attr != prev.attr || c.flags != 0 {
			// The slow path: a wide character's tail, or another style.
			if c.flags&flagTail != 0 {
				continue
			}
			if !sameStyle(prev, c) {
				spans = append(spans, Span{Start: start, End: len(buf), Style: styleOf(prev)})
				start = len(buf)
				prev = c
			}
		}
		if ch := c.ch; ch > 0 && ch < utf8.RuneSelf {
			buf = append(buf, byte(ch)) // most cells: printable ASCII
			continue
		}
		buf = appendCell(buf, c, clusters)
	}
	spans = append(spans, Span{Start: start, End: len(buf), Style: styleOf(prev)})
	l.Text = s.keepText(buf)
	l.Spans = s.keepSpans(spans)
	s.scratch, s.spans = buf, spans
	r.line = l
	return l
}

// plainText returns the text of cells when they are all ASCII (or blank)
// in the style of the first, built in buf; ok is false otherwise. It is the
// tight loop most rows take: one compare of the style and one store a cell.
func plainText(cells []cell, buf []byte) (text []byte, ok bool) {
	buf = slices.Grow(buf[:0], len(cells))[:len(cells)]
	fg, bg, attr := cells[0].fg, cells[0].bg, cells[0].attr
	for x := range cells {
		c := &cells[x]
		ch := c.ch
		if uint32(ch) >= utf8.RuneSelf || c.fg != fg || c.bg != bg || c.attr != attr || c.flags != 0 {
			return buf[:0], false
		}
		if ch == 0 {
			ch = ' '
		}
		buf[x] = byte(ch)
	}
	return buf, true
}

// spanSlab is how many Spans keepSpans allocates at once.
const spanSlab = 1024

// keepSpans returns an immutable copy of spans, cut from a slab shared with
// other Lines so that building a row costs one allocation (its text), not
// two. The copy's capacity is its length: appending to it cannot reach
// another Line's spans.
func (s *Screen) keepSpans(spans []Span) []Span {
	n := len(spans)
	if n > spanSlab/4 {
		return append([]Span(nil), spans...)
	}
	if cap(s.slab)-len(s.slab) < n {
		s.slab = make([]Span, 0, spanSlab)
	}
	k := len(s.slab)
	s.slab = append(s.slab, spans...)
	return s.slab[k : k+n : k+n]
}

// keepSpan is keepSpans of the one span of a row in one style.
func (s *Screen) keepSpan(sp Span) []Span {
	if cap(s.slab) == len(s.slab) {
		s.slab = make([]Span, 0, spanSlab)
	}
	k := len(s.slab)
	s.slab = append(s.slab, sp)
	return s.slab[k : k+1 : k+1]
}

// textSlab is how many bytes of text keepText allocates at once.
const textSlab = 8 << 10

// keepText returns text as a string cut from a slab shared with other
// Lines, so that building a row does not cost an allocation of its own:
// rows scroll off a plain terminal at a hundred thousand a second. The
// slab is a strings.Builder, whose bytes never change once written, so the
// strings stay immutable; a slab lives as long as any of its strings.
func (s *Screen) keepText(text []byte) string {
	n := len(text)
	if n == 0 {
		return ""
	}
	if n > textSlab/4 {
		return string(text)
	}
	if s.textArena.Cap()-s.textArena.Len() < n {
		s.textArena = strings.Builder{}
		s.textArena.Grow(textSlab)
	}
	k := s.textArena.Len()
	s.textArena.Write(text)
	return s.textArena.String()[k:]
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

// RowVersion returns the version of visible row y (0-based) of the active
// screen, as Line(y).Version would, without building the Line; 0 for a row
// outside the screen.
func (s *Screen) RowVersion(y int) uint64 {
	if y < 0 || y >= s.rows {
		return 0
	}
	return s.rowVersion(s.cur.rows[y])
}

package screen

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// freshLine builds the Line of r from its cells the plain way, one cell
// at a time, without the row's cache or lineOf's fast paths: the full
// re-render a cached Line must equal.
func freshLine(s *Screen, r *row) Line {
	l := Line{Wrapped: r.wrapped, Version: s.rowVersion(r), Mark: r.mark}
	n := usedCells(r)
	if n == 0 {
		return l
	}
	var buf []byte
	var spans []Span
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
	l.Text = string(buf)
	l.Spans = append(spans, Span{Start: start, End: len(buf), Style: styleOf(prev)})
	return l
}

// FuzzDirtyRows feeds a stream in chunks whose sizes come from steps,
// reading the rows after every chunk the way the scanner does (only rows
// whose version moved), and checks the dirty-row invariants: a row whose
// version did not change shows what a full re-render shows, every Line
// (cached or not) equals a full re-render, and every row scrolled off
// carries the text its cells held.
func FuzzDirtyRows(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/recordings/*/*.raw")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(uint8(100), uint8(30), []byte{7, 200, 3, 90}, data[:min(len(data), 64<<10)])
		}
	}
	for _, c := range synthCases() {
		f.Add(uint8(c.cols), uint8(c.rows), []byte{1, 2, 3}, []byte(c.data))
	}
	f.Add(uint8(10), uint8(3), []byte{5}, []byte("abcdefghijklmnop\r\nq\x1b[2;1Hxx\x1b[1L\x1b[M\x1b[2;3r\n\n\x1bM\x1b[rz\r\n\r\n"))
	f.Fuzz(func(t *testing.T, cols, rows uint8, steps, data []byte) {
		var scr *Screen
		scr = NewWithOptions(Options{Cols: int(cols)%120 + 1, Rows: int(rows)%40 + 1, OnScrollOff: func(l Line) {
			// The row is still on screen (row 0) when it is reported.
			if want := freshLine(scr, scr.cur.rows[0]); l.Text != want.Text || !reflect.DeepEqual(l.Spans, want.Spans) {
				t.Fatalf("scrolled-off row %q, its cells hold %q", l.Text, want.Text)
			}
		}})
		seen := make([]uint64, scr.rows)
		text := make([]string, scr.rows)
		for i := 0; len(data) > 0; i++ {
			n := 1
			if len(steps) > 0 {
				n = int(steps[i%len(steps)]) + 1
			}
			n = min(max(n, len(data)/500), len(data)) // bounded time: at most ~500 chunks
			scr.Write(data[:n])
			data = data[n:]
			if i%5 == 4 {
				c, r := scr.Size()
				scr.Resize(c+i%3-1, r+i%2)
				seen = make([]uint64, scr.rows)
				text = make([]string, scr.rows)
			}
			for y := range scr.rows {
				r := scr.cur.rows[y]
				want := freshLine(scr, r)
				if v := scr.RowVersion(y); v == seen[y] && v != 0 && text[y] != want.Text {
					t.Fatalf("row %d: version %d unchanged, text was %q, now %q", y, v, text[y], want.Text)
				}
				got := scr.Line(y)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("row %d: cached line %+v, re-rendered %+v", y, got, want)
				}
				seen[y], text[y] = got.Version, got.Text
			}
		}
	})
}

// BenchmarkLineBuild measures building the Line of one 60-column row of
// plain text, as every row scrolling off does.
func BenchmarkLineBuild(b *testing.B) {
	s := New(100, 5)
	s.Write([]byte("the quick brown fox jumps over the lazy dog while the build"))
	r := s.cur.rows[0]
	b.ReportAllocs()
	for b.Loop() {
		r.dirty = true
		_ = s.lineOf(r)
	}
}

func BenchmarkLineBuildTextOnly(b *testing.B) {
	s := New(100, 5)
	s.Write([]byte("the quick brown fox jumps over the lazy dog while the build"))
	r := s.cur.rows[0]
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = s.appendText(r, buf[:0])
	}
}

func BenchmarkLineBuildPrint(b *testing.B) {
	s := New(100, 5)
	p := []byte("the quick brown fox jumps over the lazy dog while the build")
	b.ReportAllocs()
	for b.Loop() {
		s.cx = 0
		s.printASCII(p)
	}
}

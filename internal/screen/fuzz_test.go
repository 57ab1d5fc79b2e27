package screen

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzScreen feeds random bytes at random sizes, split at random points
// with a resize in between: no panic, the row count always matches, the
// cursor stays on the screen and memory stays bounded. Whatever came
// before, a CAN brings the model back to reading text, and so does
// CutString: nothing a program writes leaves it blind.
func FuzzScreen(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/recordings/*/*.raw")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(uint8(80), uint8(24), uint16(len(data)/2), data)
		}
	}
	for _, c := range synthCases() {
		f.Add(uint8(c.cols), uint8(c.rows), uint16(len(c.data)/3), []byte(c.data))
	}
	f.Add(uint8(1), uint8(1), uint16(0), []byte("中\u0301\x1b[2@\x1b[L\x1b]0;x"))
	for _, st := range stringIntros {
		f.Add(uint8(20), uint8(3), uint16(1), []byte("a"+st.intro+"data\x1b\x1b[2J\r\n@relay:Bob x"))
	}
	f.Fuzz(func(t *testing.T, cols, rows uint8, cut uint16, data []byte) {
		s := New(int(cols)%200+1, int(rows)%60+1)
		k := min(int(cut), len(data))
		s.Write(data[:k])
		check(t, s)
		s.Resize(int(rows)%50+1, int(cols)%70+1)
		check(t, s)
		s.Write(data[k:])
		check(t, s)
		reads := func(how string) {
			t.Helper()
			if s.state != stGround || s.uneed != 0 {
				t.Fatalf("after %s: input state %d, %d UTF-8 bytes awaited; want text", how, s.state, s.uneed)
			}
		}
		s2 := New(int(cols)%200+1, int(rows)%60+1)
		s2.Write(data)
		s2.CutString()
		if _, open := s2.OpenString(); open {
			t.Fatal("a string is open after CutString")
		}
		s.Write([]byte{0x18})
		reads("CAN")
		s.Write(data)
		s.Write([]byte{0x1a})
		reads("SUB")
	})
}

// check verifies the invariants of s.
func check(t *testing.T, s *Screen) {
	t.Helper()
	cols, rows := s.Size()
	lines := s.Lines()
	if n := len(lines); n != rows {
		t.Fatalf("Lines() has %d rows, want %d", n, rows)
	}
	// Lines come from a per-row cache, rebuilt only for dirty rows (rows
	// that moved keep their text): they must match a fresh build and the
	// text built without it.
	var sb strings.Builder
	for y, l := range lines {
		sb.WriteString(l.Text + "\n")
		s.cur.rows[y].line, s.cur.rows[y].dirty = Line{}, true
		if fresh := s.Line(y); !reflect.DeepEqual(fresh, l) {
			t.Fatalf("row %d: cached line %+v, fresh %+v", y, l, fresh)
		}
	}
	if sb.String() != s.Text() {
		t.Fatalf("Lines() text %q differs from Text() %q", sb.String(), s.Text())
	}
	if n := strings.Count(s.Text(), "\n"); n != rows {
		t.Fatalf("Text() has %d rows, want %d", n, rows)
	}
	if x, y := s.Cursor(); x < 0 || x >= cols || y < 0 || y >= rows {
		t.Fatalf("cursor %d,%d outside %dx%d", x, y, cols, rows)
	}
	if s.cx > cols || s.rupper < 0 || s.rlower >= rows || s.rupper >= s.rlower && rows > 1 {
		t.Fatalf("state out of range: cx %d region %d-%d on %dx%d", s.cx, s.rupper, s.rlower, cols, rows)
	}
	for _, b := range []*buffer{s.main, s.alt} {
		if b == nil {
			continue
		}
		if len(b.rows) != rows {
			t.Fatalf("buffer has %d rows, want %d", len(b.rows), rows)
		}
		for y, r := range b.rows {
			if len(r.cells) != cols {
				t.Fatalf("row %d has %d cells, want %d", y, len(r.cells), cols)
			}
			for x := r.used; x < cols; x++ {
				if r.cells[x] != (cell{}) {
					t.Fatalf("row %d: cell %d beyond used %d is %+v", y, x, r.used, r.cells[x])
				}
			}
		}
	}
	if len(s.clusters) > maxClusters || cap(s.osc) > 2*maxOSCData {
		t.Fatalf("unbounded state: %d clusters, OSC buffer %d", len(s.clusters), cap(s.osc))
	}
}

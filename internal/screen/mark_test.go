package screen

import (
	"fmt"
	"testing"
)

func marks(s *Screen) string {
	var out string
	for _, l := range s.Lines() {
		out += fmt.Sprint(int(l.Mark))
	}
	return out
}

func TestMarkLine(t *testing.T) {
	const cut Mark = 1
	cases := []struct {
		name, before, after string
		want                string // the mark of each row, top to bottom
	}{
		{"rest of the line and its wraps", "", "0123456789abcdefghijklmnopqrstu\r\nnext", "11110"},
		{"rows above that wrap into it", "0123456789abcde", "x\r\nnext", "11000"},
		{"line feed ends it", "", "rest\nnext", "10000"},
		{"cursor move ends it", "", "rest\x1b[3;1Hthere", "10000"},
		{"erased whole", "", "rest\x1b[2Kagain", "00000"},
		{"erased by a clear", "", "rest\x1b[2J\x1b[Hnew", "00000"},
		{"erased at column 0", "", "rest\r\x1b[Knew", "00000"},
		{"overwritten stays", "", "rest\rnew", "10000"},
		{"scrolled with its row", "a\r\nb\r\nc\r\nd\r\ne", "rest\r\nf\r\ng", "00100"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := New(10, 5)
			s.Write([]byte(tc.before))
			s.MarkLine(cut)
			s.Write([]byte(tc.after))
			if got := marks(s); got != tc.want {
				t.Errorf("marks %s, want %s; screen:\n%s", got, tc.want, s.Text())
			}
		})
	}
}

func TestMarkGoesToScrollback(t *testing.T) {
	var off []Line
	s := NewWithOptions(Options{Cols: 10, Rows: 3, OnScrollOff: func(l Line) { off = append(off, l) }})
	s.Write([]byte("x"))
	s.MarkLine(1)
	s.Write([]byte("rest\r\na\r\nb\r\nc\r\nd"))
	if len(off) != 2 || off[0].Mark != 1 || off[1].Mark != 0 {
		t.Fatalf("scrolled off %+v", off)
	}
}

func TestPrintMark(t *testing.T) {
	s := New(10, 5)
	s.Write([]byte("before\r\n"))
	s.SetPrintMark(2)
	s.Write([]byte("typed\r\n\r\n\x1b[5;1Hbox"))
	s.SetPrintMark(0)
	s.Write([]byte("\x1b[4;1Hafter"))
	if got := marks(s); got != "02002" {
		t.Errorf("marks %s, want 02002; screen:\n%s", got, s.Text())
	}
	s.Write([]byte("\x1b[2;1H\x1b[2Kredrawn"))
	if got := marks(s); got != "00002" {
		t.Errorf("after erase: marks %s, want 00002", got)
	}
}

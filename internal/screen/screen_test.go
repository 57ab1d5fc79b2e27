package screen

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func write(s *Screen, parts ...string) {
	for _, p := range parts {
		s.Write([]byte(p))
	}
}

func TestSGRSpans(t *testing.T) {
	bold := Style{Bold: true}
	tests := []struct {
		name string
		in   string
		want []Span
	}{
		{"plain", "abc", []Span{{0, 3, Style{}}}},
		{"bold then reset", "\x1b[1mab\x1b[0mc", []Span{{0, 2, bold}, {2, 3, Style{}}}},
		{"bold off by 22", "\x1b[1ma\x1b[22mb", []Span{{0, 1, bold}, {1, 2, Style{}}}},
		{"faint italic underline reverse", "\x1b[2;3;4;7mx", []Span{{0, 1, Style{Faint: true, Italic: true, Underline: true, Reverse: true}}}},
		{"underline off by 4:0", "\x1b[4mx\x1b[4:0my", []Span{{0, 1, Style{Underline: true}}, {1, 2, Style{}}}},
		{"16 colours", "\x1b[31;42mx\x1b[91;102my", []Span{
			{0, 1, Style{FG: PaletteColor(1), BG: PaletteColor(2)}},
			{1, 2, Style{FG: PaletteColor(9), BG: PaletteColor(10)}}}},
		{"256 colours", "\x1b[38;5;153mcode\x1b[39m", []Span{{0, 4, Style{FG: PaletteColor(153)}}}},
		{"256 colours with colons", "\x1b[38:5:153mx", []Span{{0, 1, Style{FG: PaletteColor(153)}}}},
		{"rgb", "\x1b[38;2;1;2;3;48;2;4;5;6mx", []Span{{0, 1, Style{FG: RGBColor(1, 2, 3), BG: RGBColor(4, 5, 6)}}}},
		{"rgb with colour space", "\x1b[38:2::1:2:3mx", []Span{{0, 1, Style{FG: RGBColor(1, 2, 3)}}}},
		{"rgb without colour space", "\x1b[38:2:1:2:3mx", []Span{{0, 1, Style{FG: RGBColor(1, 2, 3)}}}},
		{"bad colour ignored", "\x1b[38;5;999mx", []Span{{0, 1, Style{}}}},
		{"empty SGR resets", "\x1b[1;31mx\x1b[my", []Span{{0, 1, Style{FG: PaletteColor(1), Bold: true}}, {1, 2, Style{}}}},
		{"multibyte offsets", "\x1b[1mé中\x1b[mx", []Span{{0, 5, bold}, {5, 6, Style{}}}},
		{"gap keeps its style", "\x1b[41ma\x1b[3Cb", []Span{{0, 1, Style{BG: PaletteColor(1)}}, {1, 4, Style{}}, {4, 5, Style{BG: PaletteColor(1)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(20, 2)
			write(s, tt.in)
			if got := s.Line(0).Spans; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("spans of %q:\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestColorEncoding(t *testing.T) {
	if !DefaultColor.IsDefault() || PaletteColor(0).IsDefault() {
		t.Error("palette 0 must differ from the default colour")
	}
	if n, ok := PaletteColor(153).Palette(); !ok || n != 153 {
		t.Errorf("PaletteColor(153).Palette() = %d, %v", n, ok)
	}
	if r, g, b, ok := RGBColor(1, 2, 3).RGB(); !ok || r != 1 || g != 2 || b != 3 {
		t.Errorf("RGBColor(1, 2, 3).RGB() = %d %d %d %v", r, g, b, ok)
	}
	if _, ok := RGBColor(0, 0, 5).Palette(); ok {
		t.Error("an RGB colour is not a palette colour")
	}
}

func TestCursor(t *testing.T) {
	tests := []struct {
		in       string
		col, row int
	}{
		{"", 0, 0},
		{"abc", 3, 0},
		{"0123456789", 9, 0}, // pending wrap shows as the last column
		{"0123456789x", 1, 1},
		{"\x1b[3;4H", 3, 2},
		{"\x1b[99;99H", 9, 4},
		{"\x1b[3;4H\x1b[A\x1b[2D", 1, 1},
		{"\x1b[5G", 4, 0},
		{"\x1b[3d", 0, 2},
		{"\x1b[2;3Hab\x1b7\x1b[H\x1b8", 4, 1},
		{"\x1b[2;3H\x1b[s\x1b[5;5H\x1b[u", 2, 1},
		{"\x1b[2;4r", 0, 0}, // DECSTBM homes the cursor
		{"a\tb", 9, 0},
		{"\x1b[3;1H\x1b[2E", 0, 4},
		{"\x1b[3;5H\x1b[F", 0, 1},
	}
	for _, tt := range tests {
		s := New(10, 5)
		write(s, tt.in)
		if col, row := s.Cursor(); col != tt.col || row != tt.row {
			t.Errorf("%q: cursor %d,%d, want %d,%d", tt.in, col, row, tt.col, tt.row)
		}
	}
}

func TestModes(t *testing.T) {
	s := New(10, 3)
	if s.BracketedPaste() || s.AltScreen() || s.SyncOutput() || !s.CursorVisible() {
		t.Fatal("a new screen has default modes")
	}
	write(s, "\x1b[?2004h\x1b[?2026h\x1b[?25l\x1b[?1049h")
	if !s.BracketedPaste() || !s.SyncOutput() || s.CursorVisible() || !s.AltScreen() {
		t.Errorf("modes not set: paste %v sync %v cursor %v alt %v", s.BracketedPaste(), s.SyncOutput(), s.CursorVisible(), s.AltScreen())
	}
	write(s, "\x1b[?2004l\x1b[?2026l\x1b[?25h\x1b[?1049l")
	if s.BracketedPaste() || s.SyncOutput() || !s.CursorVisible() || s.AltScreen() {
		t.Error("modes not reset")
	}
	// Mouse, focus and kitty keyboard modes are accepted and draw nothing.
	write(s, "\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1006h\x1b[?1004h\x1b[>7u\x1b[?u\x1b[>0q\x1b[cok")
	if got := s.Line(0).Text; got != "ok" {
		t.Errorf("row 0 = %q, want %q", got, "ok")
	}
}

func TestAltScreenKeepsMain(t *testing.T) {
	s := New(10, 3)
	write(s, "shell$ ", "\x1b[?1049h", "\x1b[2J\x1b[Hfull screen")
	if got := s.Line(0).Text; got != "full scree" {
		t.Errorf("alt row 0 = %q", got)
	}
	write(s, "\x1b[?1049l")
	if got := s.Line(0).Text; got != "shell$" {
		t.Errorf("main row 0 after leaving = %q, want the shell prompt back", got)
	}
	if col, row := s.Cursor(); col != 7 || row != 0 {
		t.Errorf("cursor after ?1049l = %d,%d, want 7,0 (restored)", col, row)
	}
}

func TestTitleAndOSC(t *testing.T) {
	var titles []string
	type osc struct {
		num     int
		payload string
	}
	var oscs []osc
	s := NewWithOptions(Options{Cols: 30, Rows: 3,
		OnTitle: func(title string) { titles = append(titles, title) },
		OnOSC:   func(num int, payload string) { oscs = append(oscs, osc{num, payload}) },
	})
	// The title holds 0x9C inside the UTF-8 of ✳; split it across writes.
	stream := "\x1b]0;✳ Claude Code\x07a\x1b]7501;state=working:app=codex\x1b\\b\x1b]2;done\x1b\\c\x1b]8;;http://x\x07d\x1b]nonum\x07e"
	for i := 0; i < len(stream); i++ {
		s.Write([]byte{stream[i]})
	}
	if got := s.Line(0).Text; got != "abcde" {
		t.Errorf("row 0 = %q: OSC contents must not be drawn", got)
	}
	if want := []string{"✳ Claude Code", "done"}; !reflect.DeepEqual(titles, want) {
		t.Errorf("titles %q, want %q", titles, want)
	}
	if s.Title() != "done" {
		t.Errorf("Title() = %q", s.Title())
	}
	want := []osc{{7501, "state=working:app=codex"}, {8, ";http://x"}, {-1, "nonum"}}
	if !reflect.DeepEqual(oscs, want) {
		t.Errorf("OSCs %+v, want %+v", oscs, want)
	}
}

func TestHiddenStrings(t *testing.T) {
	s := New(20, 2)
	write(s, "a\x1bP1$r0m\x1b\\b\x1b_Gf=1;AAAA\x1b\\c\x1b^pm\x1b\\d\x1bXsos\x1b\\e")
	if got := s.Line(0).Text; got != "abcde" {
		t.Errorf("row 0 = %q: string contents must not be drawn", got)
	}
}

func TestScrollOff(t *testing.T) {
	var off []string
	s := NewWithOptions(Options{Cols: 10, Rows: 3, OnScrollOff: func(l Line) { off = append(off, l.Text) }})
	write(s, "one\r\ntwo\r\nthree\r\nfour\r\nfive")
	if want := []string{"one", "two"}; !reflect.DeepEqual(off, want) {
		t.Errorf("scrolled off %q, want %q", off, want)
	}
	// A scroll region is not the scrollback.
	write(s, "\x1b[1;2r\x1b[2;1H\n\n\x1b[r")
	if len(off) != 2 {
		t.Errorf("scrolling inside a region reported %q", off[2:])
	}
	// SU on the whole screen is.
	write(s, "\x1b[S")
	if len(off) != 3 {
		t.Errorf("SU reported %d rows, want 1 more", len(off)-2)
	}
	// Nor is the alternate screen.
	write(s, "\x1b[?1049h\x1b[3;1Ha\nb\nc\n")
	if len(off) != 3 {
		t.Errorf("the alternate screen reported %q", off[3:])
	}
}

func TestVersion(t *testing.T) {
	s := New(10, 3)
	v0 := s.Version()
	write(s, "hello")
	v1, l1 := s.Version(), s.Line(0).Version
	if v1 <= v0 {
		t.Fatal("writing text must increase Version")
	}
	row1 := s.Line(1).Version
	write(s, "\x1b[H", "hello", "\x1b[2;3H")
	if s.Version() != v1 || s.Line(0).Version != l1 {
		t.Error("rewriting the same text or moving the cursor must not change versions")
	}
	write(s, "\x1b[1;1HJ")
	if s.Line(0).Version == l1 || s.Line(1).Version != row1 {
		t.Error("a change to row 0 must change its version and only its version")
	}
	before := s.Line(0).Version
	write(s, "\x1b[3;1H\n")
	if s.Line(0).Version == before {
		t.Error("scrolling moves rows: their versions must change")
	}
	v := s.Version()
	s.Reset()
	if s.Version() <= v {
		t.Error("Version must keep increasing across Reset")
	}
}

func TestWrapped(t *testing.T) {
	s := New(5, 3)
	write(s, "abcdefg\r\nxy")
	if !s.Line(0).Wrapped || s.Line(1).Wrapped || s.Line(2).Wrapped {
		t.Errorf("wrapped flags %v %v %v, want true false false", s.Line(0).Wrapped, s.Line(1).Wrapped, s.Line(2).Wrapped)
	}
	write(s, "\x1b[1;1H\x1b[2K")
	if s.Line(0).Wrapped {
		t.Error("erasing the row must clear its wrap flag")
	}
	// Exactly at the last column nothing wraps until the next character.
	s = New(5, 3)
	write(s, "abcde")
	if s.Line(0).Wrapped {
		t.Error("a full row has not wrapped yet")
	}
}

func TestResize(t *testing.T) {
	var off []string
	s := NewWithOptions(Options{Cols: 10, Rows: 4, OnScrollOff: func(l Line) { off = append(off, l.Text) }})
	write(s, "one\r\ntwo\r\nthree\r\nfour567890")
	s.Resize(6, 2)
	if c, r := s.Size(); c != 6 || r != 2 {
		t.Fatalf("Size() = %d,%d", c, r)
	}
	if got := s.Text(); got != "three\nfour56\n" {
		t.Errorf("after shrinking: %q", got)
	}
	if want := []string{"one", "two"}; !reflect.DeepEqual(off, want) {
		t.Errorf("rows cut at the top went to scrollback as %q, want %q", off, want)
	}
	s.Resize(8, 4)
	if got := s.Text(); got != "three\nfour56\n\n\n" {
		t.Errorf("after growing: %q", got)
	}
	if len(s.Lines()) != 4 {
		t.Errorf("Lines() has %d rows, want 4", len(s.Lines()))
	}
	// Rows below the cursor go first, blank or not (as tmux 3.3a does).
	s = New(10, 6)
	write(s, "1\r\n2\r\n3\r\n4\r\n5\r\n6\x1b[2;1H")
	s.Resize(8, 3)
	if got := s.Text(); got != "1\n2\n3\n" {
		t.Errorf("shrinking with rows below the cursor: %q", got)
	}
	if col, row := s.Cursor(); col != 0 || row != 1 {
		t.Errorf("cursor %d,%d after shrinking, want 0,1", col, row)
	}
	// Absurd sizes are clamped.
	s.Resize(-5, 1<<30)
	if c, r := s.Size(); c != 1 || r != maxDim {
		t.Errorf("Size() = %d,%d after a bad resize", c, r)
	}
}

func TestReset(t *testing.T) {
	s := New(10, 3)
	write(s, "junk\x1b[?1049h\x1b[?2004h\x1b[31mmore\x1b]0;t\x07\x1b[2;3r")
	s.Reset()
	if s.AltScreen() || s.BracketedPaste() || s.Title() != "" || s.Text() != "\n\n\n" {
		t.Errorf("after Reset: alt %v paste %v title %q text %q", s.AltScreen(), s.BracketedPaste(), s.Title(), s.Text())
	}
	write(s, "a\r\nb\r\nc\r\nd")
	if got := s.Text(); got != "b\nc\nd\n" {
		t.Errorf("scroll region survived Reset: %q", got)
	}
	// Reset in the middle of a sequence forgets it.
	write(s, "\x1b[3")
	s.Reset()
	write(s, "1mx")
	if got := s.Line(0).Text; got != "1mx" {
		t.Errorf("row 0 = %q", got)
	}
}

func TestWideAndCombining(t *testing.T) {
	s := New(10, 2)
	write(s, "中文e\u0301😀")
	l := s.Line(0)
	if l.Text != "中文e\u0301😀" {
		t.Errorf("Text = %q", l.Text)
	}
	if col, _ := s.Cursor(); col != 7 {
		t.Errorf("cursor at %d, want 7 (2+2+1+2)", col)
	}
}

func TestLinesFresh(t *testing.T) {
	s := New(10, 3)
	write(s, "abc")
	lines := s.Lines()
	if len(lines) != 3 {
		t.Fatalf("Lines() has %d rows", len(lines))
	}
	write(s, "\x1b[Hxyz")
	if lines[0].Text != "abc" {
		t.Error("Lines() results must not change with the screen")
	}
	if got := s.Line(-1); !reflect.DeepEqual(got, Line{}) {
		t.Errorf("Line(-1) = %+v", got)
	}
}

// TestNoAllocPerByte checks that writing text and sequences does not
// allocate once the screen exists.
func TestNoAllocPerByte(t *testing.T) {
	s := New(80, 24)
	data := []byte(strings.Repeat("\x1b[1;31mhello\x1b[m wörld 中文 \x1b[5;10H\x1b[K\r\n", 50))
	s.Write(data)
	if n := testing.AllocsPerRun(20, func() { s.Write(data) }); n > 0 {
		t.Errorf("Write allocated %.0f times per run", n)
	}
}

func TestSplitEverywhere(t *testing.T) {
	stream := "\x1b[1;31mé中😀\x1b]0;✳ t\x07\x1b[2;3Hx\x1bPq\x1b\\y"
	whole := New(10, 3)
	write(whole, stream)
	for cut := 1; cut < len(stream); cut++ {
		s := New(10, 3)
		write(s, stream[:cut], stream[cut:])
		if s.Text() != whole.Text() || s.Title() != whole.Title() {
			t.Errorf("split at %d: %q (title %q), want %q (title %q)", cut, s.Text(), s.Title(), whole.Text(), whole.Title())
		}
	}
	if fmt.Sprint(whole.Line(0).Spans[0].Style.FG) != fmt.Sprint(PaletteColor(1)) {
		t.Error("style lost")
	}
}

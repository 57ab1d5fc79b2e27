package scanner

import (
	"fmt"
	"strings"
	"testing"
)

// After any reset of the screen model (bytes skipped, a resize, a switch to
// the alternate screen) the rest of a line cut by it is not a line start:
// a mention in it never fires, while the next real line does.
func TestCutLineAfterResetNeverFires(t *testing.T) {
	const rest = "@relay:Bob x\r\n@relay:Bob y\r\n\r\ndone\r\n"
	for _, profile := range []string{"", "generic"} {
		cases := []struct {
			name  string
			reset func(h *harness)
		}{
			{"skip", func(h *harness) { h.s.Skip(4096) }},
			{"skip at column 0", func(h *harness) { h.s.Skip(1) }},
			{"alternate screen", func(h *harness) { h.s.Write([]byte("\x1b[?1049h")) }},
			{"alternate screen 47", func(h *harness) { h.s.Write([]byte("\x1b[?47h")) }},
		}
		for _, tc := range cases {
			t.Run(profile+"/"+tc.name, func(t *testing.T) {
				h := newHarness(t, 80, 24, profile)
				h.write("2026-01-02 line one\r\n2026-01-02 line two says ")
				tc.reset(h)
				h.write(rest)
				h.s.Flush()
				h.want("@relay:Bob y")
			})
		}
	}
}

// A resize while a line is being written: the terminal cut the row, the
// program writes the rest after it, and the line now reads wrong ("part one
// of" is gone). It never fires; the next line does.
func TestLineWrittenAcrossResizeNeverFires(t *testing.T) {
	for _, profile := range []string{"", "generic"} {
		t.Run(profile, func(t *testing.T) {
			h := newHarness(t, 80, 24, profile)
			h.write("log\r\n@relay:Bob x part one of a long line that the resize will cut ")
			h.s.Resize(40, 24)
			h.write("so the rest\r\n@relay:Bob y\r\n\r\ndone\r\n")
			h.s.Flush()
			h.want("@relay:Bob y")
		})
	}
}

// The mark on a cut line holds while it scrolls: the rest of the cut line
// and a screenful after it in one write, read only once it has scrolled
// off, still never fires.
func TestCutLineScrolledOffNeverFires(t *testing.T) {
	h := newHarness(t, 80, 10, "generic")
	h.write("line one\r\nline two says ")
	h.s.Skip(1 << 20)
	var b strings.Builder
	b.WriteString("@relay:Bob x\r\n")
	for i := range 30 {
		fmt.Fprintf(&b, "filler %d\r\n", i)
	}
	b.WriteString("@relay:Bob y\r\n")
	h.write(b.String())
	h.s.Flush()
	h.want("@relay:Bob y")
}

// A TUI that redraws after the reset is read as usual: a full clear, or a
// cut row erased and drawn again, starts real lines.
func TestRedrawAfterResetFires(t *testing.T) {
	cases := []struct{ name, redraw string }{
		{"clear", "\x1b[2J\x1b[H● @relay:Bob y\r\n\r\n  Done.\r\n"},
		{"erase the cut row", "\x1b[1;1H\x1b[2K● @relay:Bob y\r\n\x1b[2K\r\n\x1b[2K  Done.\r\n"},
		{"alt screen drawn", "\x1b[?1049h\x1b[H\x1b[2J● @relay:Bob y\r\n\r\n  Done.\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 80, 24, "")
			h.write("● some reply the scanner fell behind on, ")
			h.s.Skip(1 << 16)
			h.write("@relay:Bob x and more")
			h.write(tc.redraw)
			h.s.Flush()
			h.want("@relay:Bob y")
		})
	}
}

// After a resize a TUI redraws by cursor moves, erasing the rows it draws
// again: a command in the redraw fires.
func TestRedrawAfterResizeFires(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.write("● thinking about it")
	h.s.Resize(60, 24)
	h.write("\x1b[1;1H\x1b[2K● @relay:Bob y\r\n\x1b[2K\r\n\x1b[2K  Done.\r\n")
	h.s.Flush()
	h.want("@relay:Bob y")
}

// A fast stream scrolls a long line, soft-wrapped so that a mention in its
// middle is drawn at column 0 of its second row, off the top of the screen:
// wherever the next pass's view starts, that row is read with the row it
// wraps from, never as a line start.
func TestViewStartsAtLineStart(t *testing.T) {
	for k := range 30 {
		h := newHarness(t, 80, 5, "generic")
		h.write(strings.Repeat("x", 80) + "@relay:Bob x please\r\n")
		var b strings.Builder
		for i := range k {
			fmt.Fprintf(&b, "filler %d\r\n", i)
		}
		h.write(b.String())
		h.write("a\r\nb\r\n@relay:Bob y\r\n")
		h.s.Flush()
		if got := h.fired(); len(got) != 1 || got[0] != "@relay:Bob y" {
			t.Errorf("%d rows after the wrapped line: fired %q, want only @relay:Bob y", k, got)
		}
	}
}

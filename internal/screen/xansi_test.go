package screen

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestXAnsiParserReadsC1InsideUTF8 documents why this package collects OSC
// and other strings itself instead of leaving them to the x/ansi parser:
// the parser (v0.11.9) treats the byte 0x9C as the C1 string terminator even
// inside the UTF-8 encoding of a character, so Claude Code's title
// "✳ Claude Code" (✳ is E2 9C B3) ends after "\xe2" and the rest of the
// title is printed as text. The bug is in the parser's transition table,
// not only in x/vt. If this test fails, x/ansi has fixed it.
func TestXAnsiParserReadsC1InsideUTF8(t *testing.T) {
	var osc string
	var printed []rune
	p := ansi.NewParser()
	p.SetHandler(ansi.Handler{
		HandleOsc: func(_ int, data []byte) { osc = string(data) },
		Print:     func(r rune) { printed = append(printed, r) },
	})
	for _, b := range []byte("\x1b]0;✳ Claude Code\x07") {
		p.Advance(b)
	}
	if osc != "0;\xe2" || string(printed) != " Claude Code" {
		t.Fatalf("x/ansi behaviour changed: OSC %q, printed %q; the workaround in stringBytes may be unneeded", osc, string(printed))
	}
	// Our model keeps the whole title and draws nothing.
	s := New(20, 1)
	s.Write([]byte("\x1b]0;✳ Claude Code\x07"))
	if s.Title() != "✳ Claude Code" || s.Line(0).Text != "" {
		t.Errorf("title %q, row %q", s.Title(), s.Line(0).Text)
	}
}

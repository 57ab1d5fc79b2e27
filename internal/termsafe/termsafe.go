// Package termsafe makes text that came from outside relay (a peer's
// message, a presence record, a memory, a configuration file, the hub's
// state files) safe to print on a human's terminal.
//
// A terminal obeys control characters and escape sequences in what it is
// given: an OSC 52 sequence writes the clipboard, CSI 2J clears the screen,
// OSC 0 sets the window title, a carriage return overwrites what the line
// showed. Anyone who holds the workspace token can put such bytes in a
// message or a presence value, and anyone who can commit a .relay/config.toml
// can put them in a key. Text and Line show every such byte instead of
// sending it:
//
//	C0 controls and DEL    \x1b, \x07, \r, \x7f (Text keeps \n and \t)
//	C1 controls            \u009b (U+0080..U+009F: 8-bit CSI, OSC, ...)
//	bidi overrides         \u202e (U+202A..U+202E, U+2066..U+2069)
//	invalid UTF-8          \xff, one per bad byte
//
// Everything else, printable ASCII and printable Unicode alike, passes
// unchanged, and text with nothing to show costs no allocation. The result
// never holds a byte below 0x20 other than the kept whitespace, nor 0x7f,
// nor a C1 control, and is valid UTF-8. Output that must stay exact (JSON,
// which its encoder escapes, or an agent's own screen) does not go through
// here.
package termsafe

import (
	"strings"
	"unicode/utf8"
)

// Text returns s safe for a terminal, keeping its line breaks and tabs: for
// output that is several lines by design (a memory shown in full, a list of
// configuration mistakes, an error message).
func Text(s string) string { return escape(s, true) }

// Line returns s safe for a terminal as one line: newlines and tabs are
// shown as \n and \t too, so that a field cannot start a line of its own or
// shift a table's columns.
func Line(s string) string { return escape(s, false) }

// Lines applies Line to each of ss, for table cells and fields.
func Lines(ss ...string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Line(s)
	}
	return out
}

// escape is Text (keep true) or Line (keep false).
func escape(s string, keep bool) string {
	i := firstUnsafe(s, keep)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			writeByte(&b, s[i])
		case unsafeRune(r, keep):
			writeRune(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte that needs showing, or
// len(s) when there is none.
func firstUnsafe(s string, keep bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c), keep) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafeRune(r, keep) {
			return i
		}
		i += size
	}
	return len(s)
}

// unsafeRune reports whether r must be shown rather than sent.
func unsafeRune(r rune, keep bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !keep
	case r < 0x20, r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1 controls: 8-bit CSI, OSC, DCS...
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi overrides and isolates
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// writeRune shows an unsafe rune: \n \t \r by their usual names, other
// ASCII controls as \xNN, the rest as \uNNNN.
func writeRune(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\t':
		b.WriteString(`\t`)
	case '\r':
		b.WriteString(`\r`)
	default:
		if r < utf8.RuneSelf {
			writeByte(b, byte(r))
			return
		}
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[(r>>shift)&0xf])
		}
	}
}

// writeByte shows one byte as \xNN.
func writeByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

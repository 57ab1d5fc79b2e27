package scanner

import (
	"bytes"
	"strings"
)

// mayMention reports whether a row's text has an '@' that may start a
// command: followed by a namespace's characters and then a colon, or by
// the end of the row (the next row may go on with the rest).
func mayMention(text string) bool {
	for i := strings.IndexByte(text, '@'); i >= 0; {
		j := i + 1
		for j < len(text) && isNamespaceByte(text[j], j == i+1) {
			j++
		}
		if j == len(text) || text[j] == ':' && j > i+1 {
			return true
		}
		k := strings.IndexByte(text[j:], '@')
		if k < 0 {
			return false
		}
		i = j + k
	}
	return false
}

// isNamespaceByte reports whether c may be in a namespace ("@deploy:"):
// an ASCII letter, or after the first a digit, '-' or '_'
// (patterns.validNamespace).
func isNamespaceByte(c byte, first bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && (c >= '0' && c <= '9' || c == '-' || c == '_')
}

// mayMentionBytes reports whether output p has an '@' that may start a
// command: one followed by a namespace's characters and then a colon, or
// by anything but printable text (an escape sequence may colour the rest,
// the next write may hold it). Gemini CLI's "@path/to/file", drawn in its
// input box with every frame, starts none.
func mayMentionBytes(p []byte) bool {
	for i := bytes.IndexByte(p, '@'); i >= 0; {
		j := i + 1
		for j < len(p) && isNamespaceByte(p[j], j == i+1) {
			j++
		}
		if j == len(p) || p[j] == ':' && j > i+1 || p[j] < 0x20 || p[j] == 0x7f {
			return true
		}
		k := bytes.IndexByte(p[j:], '@')
		if k < 0 {
			return false
		}
		i = j + k
	}
	return false
}

// redrawInPlace reports whether p moves the cursor up (CSI n A, CSI row;col
// H or f, CSI n d, ESC M): line feeds after it write rows drawn before
// again, as a TUI that redraws its frame in place does (Gemini CLI moves up
// over its rows and writes them again, line feeds and all), rather than
// end a line of new output.
func redrawInPlace(p []byte) bool {
	for i := bytes.IndexByte(p, 0x1b); i >= 0 && i+1 < len(p); {
		switch p[i+1] {
		case 'M':
			return true
		case '[':
			j := i + 2
			for j < len(p) && (p[j] >= '0' && p[j] <= '9' || p[j] == ';') {
				j++
			}
			if j < len(p) && (p[j] == 'A' || p[j] == 'H' || p[j] == 'f' || p[j] == 'd') {
				return true
			}
		}
		k := bytes.IndexByte(p[i+1:], 0x1b)
		if k < 0 {
			return false
		}
		i += 1 + k
	}
	return false
}

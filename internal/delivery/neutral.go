package delivery

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NeutralAt is what the '@' of a command-like "@word:" in a peer's text
// becomes: U+FF20 FULLWIDTH COMMERCIAL AT. A model reads "＠relay:Bob" as
// the mention it is; no scanner reads it as a command, wherever the text
// lands on a screen (after a bullet, a quote, a box glyph or any Unicode
// space, wrapped by a TUI at any column, or rendered as markdown, which
// eats the grammar's own `\@` escape but not this character).
const NeutralAt = '＠'

// maxWord bounds a namespace-like word, as the grammar does (64 bytes).
const maxWord = 64

// Neutralize replaces the '@' of every "@word:" in s with NeutralAt, where
// word is namespace-like (a letter, then letters, digits, '-' or '_', at most
// 64): any namespace, registered or not, since user namespaces can be
// anything. Every such '@' is replaced, whatever comes before it: also the
// '@' of user@host:22 or x.@relay:C, since a terminal or an agent that
// hard-wraps lines at its width can put any character of a line at the
// start of a row, where a scanner reads a command. An "@word" not followed
// by ':' (bob@example.com, @README.md) is left alone. Invisible characters
// (format characters such as U+200B, combining marks, unassigned code
// points) are skipped when matching between the '@' and the ':', because a
// terminal or a TUI may drop them and so join "@\u200brelay:" into a
// command.
func Neutralize(s string) string {
	i := strings.IndexByte(s, '@')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	done := 0
	for ; i >= 0; i = nextAt(s, i+1) {
		if !commandWord(s[i+1:]) {
			continue
		}
		b.WriteString(s[done:i])
		b.WriteRune(NeutralAt)
		done = i + 1
	}
	b.WriteString(s[done:])
	return b.String()
}

// nextAt returns the index of the next '@' in s from from on, or -1.
func nextAt(s string, from int) int {
	if j := strings.IndexByte(s[from:], '@'); j >= 0 {
		return from + j
	}
	return -1
}

// commandWord reports whether s starts with a namespace-like word and a
// colon, invisible characters aside.
func commandWord(s string) bool {
	n := 0
	for i := 0; i < len(s) && i < 4*maxWord; {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == ':':
			return n > 0
		case r < utf8.RuneSelf && (isLetter(byte(r)) || n > 0 && (isDigit(byte(r)) || r == '-' || r == '_')):
			if n++; n > maxWord {
				return false
			}
		case invisible(r):
		default:
			return false
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// invisible reports whether r may take no column on a screen, or be dropped
// on the way there.
func invisible(r rune) bool {
	if unicode.IsSpace(r) {
		return false
	}
	return !unicode.IsGraphic(r) || unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf)
}

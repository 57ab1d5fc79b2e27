package scanner

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// asciiSpace marks the ASCII bytes unicode.IsSpace counts as white space.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// collapse folds runs of white space to one space and trims the ends, as
// strings.Join(strings.Fields(s), " ") does. It runs for every row read and
// every text typed (a tenth of a receiving wrapper's CPU with Fields), so
// it returns s itself when s is already collapsed, as most rows are, and
// otherwise allocates once.
func collapse(s string) string {
	if isCollapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	gap := false // white space since the last word
	for i := 0; i < len(s); {
		c, n := s[i], 1
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		switch {
		case space:
			gap = b.Len() > 0
		default:
			if gap {
				b.WriteByte(' ')
				gap = false
			}
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isCollapsed reports whether collapse(s) == s: no white space but single
// ASCII spaces between words.
func isCollapsed(s string) bool {
	afterSpace := true // a leading space is not collapsed
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				return false
			}
			i += n - 1
			afterSpace = false
			continue
		}
		if asciiSpace[c] {
			if c != ' ' || afterSpace {
				return false
			}
			afterSpace = true
			continue
		}
		afterSpace = false
	}
	return !afterSpace || s == ""
}

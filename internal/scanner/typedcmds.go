package scanner

import (
	"strings"
	"unicode/utf8"
)

// Commands relay typed, remembered for the whole session rather than for
// the last maxInjected texts. A peer's text reaches the agent with every
// command neutralised (delivery), but relay's own words and the user's
// hooks keep theirs ("write a line starting with @relay:Alice", "@memory:save
// what you learned"), and a receiver that hard-wraps its lines at its width
// can put such a command at a row start. Its echo never fires while the row
// keeps its typed mark; an agent that redraws its history later (a resize,
// a scroll-back) draws the row again unmarked, possibly after any number of
// later messages. So the text from every command relay typed to its line's
// end is kept: a row that starts with a part of one is typed text, as long
// as the session lasts. Identical commands (the header of every message
// from one sender) are kept once, so the store grows with what is distinct,
// and it is bounded all the same (maxTypedCmds, the oldest forgotten).

// maxTypedCmd caps the bytes kept of one typed command (from its '@' to
// its line's end, white space folded).
const maxTypedCmd = 512

// maxTypedCmds bounds the distinct typed commands kept.
const maxTypedCmds = 1 << 12

// typedCommands is the set of commands relay typed, by their namespace
// ("@ns:"), in the order first seen.
type typedCommands struct {
	byWord map[string][]string
	order  []string // the segments, oldest first, for the bound
	seen   map[string]bool
}

// add remembers the commands of one typed line (raw, not collapsed).
func (c *typedCommands) add(line string) {
	for i := strings.IndexByte(line, '@'); i >= 0; i = nextAt(line, i+1) {
		seg := collapse(line[i:])
		if len(seg) > maxTypedCmd {
			cut := maxTypedCmd
			for cut > 0 && !utf8.RuneStart(seg[cut]) {
				cut--
			}
			seg = seg[:cut]
		}
		w := commandWordOf(seg)
		if w == "" || c.seen[seg] {
			continue
		}
		if c.byWord == nil {
			c.byWord, c.seen = map[string][]string{}, map[string]bool{}
		}
		c.byWord[w] = append(c.byWord[w], seg)
		c.seen[seg] = true
		c.order = append(c.order, seg)
		if len(c.order) > maxTypedCmds {
			c.forget(c.order[0])
			c.order = c.order[1:]
		}
	}
}

// forget drops one segment.
func (c *typedCommands) forget(seg string) {
	w := commandWordOf(seg)
	segs := c.byWord[w]
	for j, s := range segs {
		if s == seg {
			segs = append(segs[:j], segs[j+1:]...)
			break
		}
	}
	if len(segs) == 0 {
		delete(c.byWord, w)
	} else {
		c.byWord[w] = segs
	}
	delete(c.seen, seg)
}

// holds reports whether the row core t (glyphs stripped, white space
// folded) is the start of a command relay typed (a hard wrap cut the rest
// onto the next row, or nothing was cut), or, for a command kept capped,
// starts with all that was kept. A command relay typed followed by more
// words on the agent's row ("@relay:Alice thanks" after relay typed
// "…starting with @relay:Alice") is the agent's own.
func (c *typedCommands) holds(t string) bool {
	w := commandWordOf(t)
	if w == "" {
		return false
	}
	for _, seg := range c.byWord[w] {
		if strings.HasPrefix(seg, t) || len(seg) >= maxTypedCmd-utf8.UTFMax && strings.HasPrefix(t, seg) {
			return true
		}
	}
	return false
}

// nextAt returns the index of the next '@' in s from from on, or -1.
func nextAt(s string, from int) int {
	if j := strings.IndexByte(s[from:], '@'); j >= 0 {
		return from + j
	}
	return -1
}

// commandWordOf returns the "@ns:" a segment starts with, lower case, or
// "" when it starts with no "@word:".
func commandWordOf(s string) string {
	n := 1
	for n < len(s) && (isASCIILetter(s[n]) || n > 1 && (s[n] >= '0' && s[n] <= '9' || s[n] == '-' || s[n] == '_')) {
		n++
	}
	if len(s) < 3 || s[0] != '@' || n == 1 || n >= len(s) || s[n] != ':' {
		return ""
	}
	return strings.ToLower(s[:n+1])
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

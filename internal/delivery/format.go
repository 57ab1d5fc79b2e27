package delivery

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize makes untrusted text safe to type into an agent: escape
// sequences and control characters are removed (tabs become spaces, line
// breaks stay; a lone CR becomes a line break), bidirectional controls are
// shown as `\u202e` (Clean), invalid UTF-8 is replaced, the '@' of every
// command-like "@word:" becomes NeutralAt (see Neutralize) and any other
// line that starts with `@` gets the grammar's escape (`\@`), so that a
// message can never make the receiving wrapper route a command by being
// echoed on its screen, wherever it lands there.
func Sanitize(s string) string {
	lines := strings.Split(Neutralize(Clean(s)), "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "@") {
			lines[i] = l[:len(l)-len(t)] + `\` + t
		}
	}
	return strings.Join(lines, "\n")
}

// Clean makes text safe for an agent's terminal and leaves its words
// alone: escape sequences and control characters are removed (tabs become
// four spaces, a lone CR or U+2028/U+2029 a line break or nothing),
// invalid UTF-8 is replaced and bidirectional controls (U+202A..U+202E,
// U+2066..U+2069) are shown as `\u202e`, as relay log shows them, so that
// no text reads in an order other than the one it is typed in. Commands
// stay as they are: Clean is for relay's own words and the text of the
// user's configured hooks and handlers; a peer's text goes through
// Sanitize.
func Clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b: // ESC: skip the whole sequence
			i += escapeLen(s[i:])
			continue
		case r == 0x9b: // C1 CSI
			i += n + csiLen(s[i+n:])
			continue
		case r == '\n':
			b.WriteByte('\n')
		case r == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				break // CR LF: the LF writes the line break
			}
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// isBidi reports whether r is a bidirectional embedding, override or
// isolate: text after it may show in another order than it is read in.
func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// escapeLen returns the length of the escape sequence at the start of s
// (which starts with ESC).
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		return 2 + csiLen(s[2:])
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: up to BEL or ST
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	default:
		if s[1] >= 0x20 && s[1] <= 0x2f && len(s) >= 3 { // ESC ( B and the like
			return 3
		}
		return 2
	}
}

// csiLen returns the length of a CSI sequence's parameters and final byte.
func csiLen(s string) int {
	for j := 0; j < len(s); j++ {
		if s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1
		}
		if s[j] < 0x20 || s[j] > 0x7e {
			return j // malformed: stop before the odd byte
		}
	}
	return len(s)
}

// Cap cuts s to at most max bytes (zero: DefaultMaxBody) at a line or word
// boundary and says so, naming the command that shows the whole message.
// The note comes on top of max; Form measures the final text instead.
func Cap(s string, max int, id string) string {
	if max <= 0 {
		max = DefaultMaxBody
	}
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf(" […%d more bytes cut]", len(s)-max)
	if id != "" {
		note = fmt.Sprintf(" […%d more bytes; the whole message: relay log --id %s]", len(s)-max, id)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexAny(s[:cut], "\n "); i > max/2 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " \n") + note
}

// Message is Form{Max: max}.Message(from, id, body): the text for a model
// CLI, capped at max bytes of final text (zero: DefaultMaxBody).
func Message(from, id, body string, max int) string {
	return Form{Max: max}.Message(from, id, body)
}

// Notice is Form{Max: max}.Notice(text).
func Notice(text string, max int) string {
	return Form{Max: max}.Notice(text)
}

// OneLine joins the lines of s for agents that submit at every line break
// (no bracketed paste): line breaks become " ⏎ ".
func OneLine(s string) string {
	return strings.ReplaceAll(s, "\n", " ⏎ ")
}

// EscapeMentions escapes every `@` that starts a word (`@README.md`,
// `see @src/main.go`) as `\@`, for CLIs that read the file a typed
// `@path` names into the model's context (Gemini CLI): text from a peer must
// never pull a file in.
func EscapeMentions(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '@' && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '\n' && (i == 0 || s[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

package delivery

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxBody caps what is typed into a model CLI for one message or
// notice: 16 KiB of final text (the header and the note on the cut
// included). A longer body is cut at a line or word boundary, never
// refused, and ends with a note naming the command that shows it whole
// (`relay log --id ID`).
const DefaultMaxBody = 16 << 10

// DefaultMaxBytes is the old name of DefaultMaxBody.
//
// Deprecated: use DefaultMaxBody.
const DefaultMaxBytes = DefaultMaxBody

// maxLabel bounds a sender's name or a message id in a header (agent names
// are at most 64 bytes), so that the header and the note always fit.
const maxLabel = 64

// quoteMark starts every line of a peer's text in a model CLI's paste, so
// that no line of it can begin like relay's own header ("[relay] …").
const quoteMark = "│ "

// shellPrefix makes a shell line a comment. The space before '#' makes it
// one also after a line the shell continues (a human's line ending in a
// backslash joins the next one: "ls\" and "# x" would read "ls# x",
// where '#' starts no comment, but "ls #" does), and keeps the line out
// of a history that ignores lines starting with a space.
const shellPrefix = " # "

// shellBreak separates relay's header from a peer's text on a shell line.
const shellBreak = " -- "

// Form says how text reaches one agent: the final text of a message or a
// notice, sanitised, neutralised, adapted to the agent and capped, all
// measured on what is typed. The zero value is a model CLI with the default
// cap.
type Form struct {
	// Shell types every text as one comment line for a program that reads
	// lines (a plain shell, a REPL): " # [relay] " and relay's header,
	// then the text with every byte outside a small safe set of ASCII
	// written as %XX (ShellText), so that the line holds no quote,
	// backslash, '$', backquote, bracket, ';' or non-ASCII byte a peer
	// could use to close a quote, a heredoc or a continuation the shell
	// is in, and fits the terminal's line limit (MaxShellLine, the Enter
	// not counted). relay log --id shows the text as it was sent.
	Shell bool
	// Mentions escapes every '@' that starts a word as `\@` in what a peer
	// or a handler wrote, for a CLI that reads the file a typed `@path`
	// names into the model's context (Gemini CLI).
	Mentions bool
	// Max caps the bytes of the final text; zero means DefaultMaxBody. A
	// shell line never exceeds MaxShellLine whatever Max says. A cap too
	// small for the header and the note is raised to hold them.
	Max int
}

// Limit returns the cap on the final text in bytes.
func (f Form) Limit() int {
	m := f.Max
	if m <= 0 {
		m = DefaultMaxBody
	}
	if f.Shell && m > MaxShellLine {
		m = MaxShellLine
	}
	return m
}

// Message is what the agent reads for one message from a peer: a line that
// says who sent it, its id and how to answer, then the body, sanitised
// (Sanitize: no escapes, no command-like "@word:") and quoted (every line
// starts with "│ "), cut to Limit with a note naming `relay log --id ID`
// when too long.
func (f Form) Message(from, id, body string) string {
	return f.MessageFrom(Sender{Name: from}, id, body)
}

// Sender says who sent a message and to whom, for the header the agent
// reads.
type Sender struct {
	Name string
	// Human is a sender that is no agent: a person (relay send, the
	// dashboard) or a script. The header names it as such, never as
	// "agent human".
	Human bool
	// ToAll is a broadcast: the header says it went to every agent, so
	// that it does not read as meant for this one alone.
	ToAll bool
}

// MessageFrom is Message with the header saying whether the sender is an
// agent or a human and whether the message went to every agent.
func (f Form) MessageFrom(from Sender, id, body string) string {
	name, id := f.label(from.Name), f.label(id)
	who := "agent " + name
	if from.Human {
		who = name + " (a human, not an agent)"
	}
	var head string
	if from.ToAll {
		head = fmt.Sprintf("[relay] Message to every agent from %s (id %s). To answer %s alone, write a line starting with @relay:%s", who, id, name, name)
	} else {
		head = fmt.Sprintf("[relay] Message from %s (id %s). To answer, write a line starting with @relay:%s", who, id, name)
	}
	note := func(cut int) string {
		if f.Shell {
			return fmt.Sprintf(" [%d more bytes, the whole message: relay log --id %s]", cut, id)
		}
		return fmt.Sprintf(" […%d more bytes; the whole message: relay log --id %s]", cut, id)
	}
	build := func(body string) string {
		if f.Shell {
			return shellPrefix + head + shellBreak + shellText(body, true)
		}
		return head + "\n" + quote(body)
	}
	return f.compose(build, f.text(body), note)
}

// Notice is a short note from relay that carries outside text (a peer's
// name, what the memory holds, an error): sanitised like a peer's text,
// its lines after the first quoted like a peer's, and cut to Limit with a
// note when too long.
func (f Form) Notice(text string) string {
	return f.note(f.text(text), true)
}

// Own is a note in relay's own words or from the user's own configuration
// (a reminder, the text of a configured hook or a Go handler's result):
// cleaned of escapes and controls (Clean) but with its commands intact, so
// that an agent that follows it to the letter writes a line that fires.
// It is cut to Limit with a note when too long. What the agent echoes of
// it never fires: the scanner knows relay typed it.
func (f Form) Own(text string) string {
	return f.note(Clean(text), false)
}

// note gives a notice's text, already made safe, its form.
func (f Form) note(text string, quoted bool) string {
	note := func(cut int) string {
		if f.Shell {
			return fmt.Sprintf(" [%d more bytes cut]", cut)
		}
		return fmt.Sprintf(" […%d more bytes cut]", cut)
	}
	build := func(text string) string {
		switch {
		case f.Shell:
			return shellPrefix + "[relay] " + shellText(text, quoted)
		case quoted:
			first, rest, more := strings.Cut(text, "\n")
			if more {
				return "[relay] " + first + "\n" + quote(rest)
			}
		}
		return "[relay] " + text
	}
	return f.compose(build, text, note)
}

// text makes outside text safe and fit for the agent. For a shell it is
// only cleaned: shellText neutralises its commands as it encodes it.
func (f Form) text(s string) string {
	if f.Shell {
		return Clean(s)
	}
	s = Sanitize(s)
	if f.Mentions {
		s = EscapeMentions(s)
	}
	return s
}

// label makes a name or an id one short, safe line: at most maxLabel
// bytes as typed, and "…" (a shell's "...") where it was cut.
func (f Form) label(s string) string {
	s = strings.ReplaceAll(f.text(s), "\n", " ")
	if f.Shell {
		s = shellText(s, true)
		if len(s) > maxLabel {
			cut := maxLabel
			if i := strings.LastIndexByte(s[:cut], '%'); i >= 0 && i > cut-3 {
				cut = i // not inside a %XX
			}
			s = s[:cut] + "..."
		}
		return s
	}
	if len(s) > maxLabel {
		cut := maxLabel
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// quote starts every line of s with quoteMark.
func quote(s string) string {
	return quoteMark + strings.ReplaceAll(s, "\n", "\n"+quoteMark)
}

// compose returns build(body), the body cut so that the whole, with
// note(bytes cut) after the cut, fits Limit.
func (f Form) compose(build func(string) string, body string, note func(cut int) string) string {
	out := build(body)
	if len(out) <= f.Limit() {
		return out
	}
	// The longest start of the body that fits once everything is in its
	// final form (a shell's escapes, a model's quote marks); the note is
	// measured with the most digits it can need. The final length grows
	// with the cut, so a binary search finds it.
	room := f.Limit() - len(note(len(body)))
	start := func(k int) int { // the rune start at or before k
		for k > 0 && k < len(body) && !utf8.RuneStart(body[k]) {
			k--
		}
		return k
	}
	// The final text is never shorter than the body it holds.
	lo, hi := 0, min(len(body), max(room, 0))
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(build(body[:start(mid)])) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	lo = start(lo)
	cut := lo
	if i := strings.LastIndexAny(body[:cut], "\n "); cut < len(body) && i > cut/2 {
		cut = i
	}
	kept := strings.TrimRight(body[:cut], " \n")
	return build(kept) + note(len(body)-len(kept))
}

// ShellText writes s as one line of a shell comment that nothing in it can
// end or turn into code: the bytes of letters, digits, the space and
// ".,:_/+=?@-" stand for themselves, every other byte (a quote, a
// backslash, '$', '`', '!', '#', ';', '&', '|', a bracket, '%', a line
// break, each byte of a non-ASCII character) is written as %XX, as in a
// URL. A program that reads the line decodes it as a URL's path is
// decoded; relay log shows the text as it was sent.
func ShellText(s string) string { return shellText(s, false) }

// shellText is ShellText; with peer, the '@' of every command-like
// "@word:" is written %40 too (the shell's form of Neutralize): the line
// decodes to the text as sent, and no scanner reads a command in it.
func shellText(s string, peer bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !shellSafe(s[i]) || s[i] == '@' && peer {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if shellSafe(c) && !(c == '@' && peer && commandWord(s[i+1:])) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte("0123456789ABCDEF"[c>>4])
		b.WriteByte("0123456789ABCDEF"[c&0xf])
	}
	return b.String()
}

// shellSafe reports whether c stands for itself in ShellText: no shell, no
// REPL and no line editor gives it a meaning inside a comment, a quote, a
// heredoc or a continued line.
func shellSafe(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte(" .,:_/+=?@-", c) >= 0
}

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

// oneLineBreak is what a line break becomes in the one-line form.
const oneLineBreak = " ⏎ "

// shellPrefix makes a shell line a comment.
const shellPrefix = "# "

// Form says how text reaches one agent: the final text of a message or a
// notice, sanitised, neutralised, adapted to the agent and capped, all
// measured on what is typed. The zero value is a model CLI with the default
// cap.
type Form struct {
	// Shell types every text as one comment line ("# " and its lines joined
	// by " ⏎ "), for a program that reads lines (a plain shell): nothing a
	// peer writes can run, and the line fits the terminal's line limit
	// (MaxShellLine, the Enter not counted).
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
// (Sanitize: no escapes, no command-like "@word:"), cut to Limit with a
// note naming `relay log --id ID` when too long.
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
		head = fmt.Sprintf("[relay] Message to every agent from %s (id %s). To answer %s alone, write a line starting with @relay:%s\n", who, id, name, name)
	} else {
		head = fmt.Sprintf("[relay] Message from %s (id %s). To answer, write a line starting with @relay:%s\n", who, id, name)
	}
	note := func(cut int) string {
		return fmt.Sprintf(" […%d more bytes; the whole message: relay log --id %s]", cut, id)
	}
	return f.compose(head, f.text(body), note)
}

// Notice is a short note from relay itself (a handler's result, an error, a
// held message), sanitised like a peer's text (a handler's output is
// outside text too) and cut to Limit with a note when too long.
func (f Form) Notice(text string) string {
	note := func(cut int) string { return fmt.Sprintf(" […%d more bytes cut]", cut) }
	return f.compose("[relay] ", f.text(text), note)
}

// text makes outside text safe and fit for the agent.
func (f Form) text(s string) string {
	s = Sanitize(s)
	if f.Mentions {
		s = EscapeMentions(s)
	}
	return s
}

// label makes a name or an id one short, safe line.
func (f Form) label(s string) string {
	s = strings.ReplaceAll(f.text(s), "\n", " ")
	if len(s) > maxLabel {
		cut := maxLabel
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// compose returns head and body in the agent's form, the body cut so that
// the whole, with note(bytes cut) after the cut, fits Limit.
func (f Form) compose(head, body string, note func(cut int) string) string {
	out := f.render(head + body)
	if len(out) <= f.Limit() {
		return out
	}
	// Room for the body once everything else is in its final form; the
	// note is measured with the most digits it can need.
	room := f.Limit() - len(f.render(head)) - len(note(len(body)))
	kept := f.fit(body, room)
	return f.render(head+kept) + note(len(body)-len(kept))
}

// render gives s the agent's form: as it is for a model CLI, one comment
// line for a shell.
func (f Form) render(s string) string {
	if !f.Shell {
		return s
	}
	return shellPrefix + OneLine(s)
}

// fit returns the longest start of body whose rendered form takes at most
// room bytes, cut on a character boundary, at a line or word break when
// one is in its second half, without trailing white space.
func (f Form) fit(body string, room int) string {
	used, cut := 0, 0
	for cut < len(body) {
		r, size := utf8.DecodeRuneInString(body[cut:])
		cost := size
		if f.Shell && r == '\n' {
			cost = len(oneLineBreak)
		}
		if used+cost > room {
			break
		}
		used += cost
		cut += size
	}
	if i := strings.LastIndexAny(body[:cut], "\n "); cut < len(body) && i > cut/2 {
		cut = i
	}
	return strings.TrimRight(body[:cut], " \n")
}

// Package patterns is the grammar of relay's commands: lines such as
// "@relay:Bob Please run the tests" or "@memory:save …" that an agent writes
// to talk to its peers. It extracts commands from a sequence of logical
// lines, either raw markdown (a Claude Code hook payload or transcript, where
// escapes and code fences are visible) or lines read off a rendered screen
// (where rendering already ate escapes and fences, and code is known by its
// colour), and it holds the registry of handlers that act on them.
//
// The grammar, in short (docs and design.md have the long form):
//   - a command starts a logical line, after optional white space, bullets,
//     prompt and box glyphs (●⏺•-*>›»│┃✦): @NS:TARGET BODY;
//   - NS is a registered namespace, case-insensitive (see Namespaces);
//   - TARGET is the run of non-space characters after the colon, empty for
//     broadcast;
//   - the body continues over the following non-blank lines until a blank
//     line, another command, a code fence or the end, joined with one space;
//   - "@NS:TARGET <<<" opens a block that keeps its line breaks until a line
//     ">>>" (or, where rendering ate the ">>>", a blank line);
//   - "\@" at the start escapes a command; nothing inside a code fence and no
//     line the wrapper injected itself fires; placeholder targets such as
//     <name> or AgentName and empty bodies for relay and broadcast never fire
//     (a user namespace's command always fires: "@deploy:staging [v1.2.3]").
package patterns

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxBodyLines caps the lines of one body (its first line included), so that
// a runaway paragraph or block cannot become one enormous message. A longer
// body is cut and marked Truncated, never silently shortened.
const MaxBodyLines = 200

// MaxBodyBytes caps the bytes of one body (16 KiB: a long message, far below
// what would strain the bus or the receiving agent's input box). A longer
// body is cut at a rune boundary and marked Truncated.
const MaxBodyBytes = 16 << 10

// Mode says what the lines are.
type Mode uint8

const (
	// Markdown lines are the agent's exact text: "\@" escapes and ``` / ~~~
	// code fences are visible and honoured; a block ends at ">>>".
	Markdown Mode = iota
	// Screen lines were read off a rendered terminal: escapes and fences are
	// gone, code is known by Line.Code, and a block also ends at a blank line
	// because markdown rendering eats the ">>>".
	Screen
)

// Line is one logical line of input.
type Line struct {
	// Text is the line without its line break. Invalid UTF-8 is replaced.
	Text string
	// Code marks a line drawn or fenced as code: it never fires, and it ends
	// a body.
	Code bool
	// Injected marks the wrapper's own typed text echoed back: it never
	// fires, and it ends a body.
	Injected bool
	// Cont marks a line that continues the previous one because the screen
	// (or the TUI) wrapped it, not because the author broke the line: it is
	// never a command start, only a continuation.
	Cont bool
}

// Command is one extracted command.
type Command struct {
	NS     string // namespace, lower case
	Target string // run of non-space characters after the colon; empty for broadcast
	Body   string // continuation lines joined with one space; a block keeps its line breaks
	// Block is true for a "<<<" block.
	Block bool
	// Truncated is true when the body hit MaxBodyLines or MaxBodyBytes.
	Truncated bool
	// Line is the index of the command's first line in the input; End is the
	// index just past its last line.
	Line, End int
	// Terminated is true when something ended the body (a blank line,
	// another command, a fence, ">>>", a cap); false when it ran into the end
	// of the input and might still grow.
	Terminated bool
}

// Options configures an Extractor. The zero value means the built-in
// namespaces and Markdown mode.
type Options struct {
	Namespaces *Namespaces
	Mode       Mode
	// LineBreaksEnd makes every line break end a paragraph body: for lines
	// of a program that does not wrap its own text (a plain shell), where
	// the next line is the next output or prompt, never more of the body.
	LineBreaksEnd bool
}

// Extractor finds commands in lines. It holds no state between calls and is
// safe for concurrent use once built.
type Extractor struct {
	ns        *Namespaces
	mode      Mode
	breaksEnd bool
}

// New returns an Extractor for opts.
func New(opts Options) *Extractor {
	ns := opts.Namespaces
	if ns == nil {
		ns, _ = NewNamespaces()
	}
	return &Extractor{ns: ns, mode: opts.Mode, breaksEnd: opts.LineBreaksEnd}
}

// ExtractText splits text into lines (LF or CRLF) and extracts its commands.
func ExtractText(text string, opts Options) []Command {
	return New(opts).Extract(SplitLines(text))
}

// SplitLines turns text into Lines, one per line break, dropping a CR before
// each LF.
func SplitLines(text string) []Line {
	parts := strings.Split(text, "\n")
	lines := make([]Line, len(parts))
	for i, p := range parts {
		lines[i] = Line{Text: strings.TrimSuffix(p, "\r")}
	}
	return lines
}

// Extract returns the commands in lines, in order.
func (x *Extractor) Extract(lines []Line) []Command {
	var out []Command
	var fence fenceState
	for i := 0; i < len(lines); {
		ln := lines[i]
		if x.mode == Markdown {
			if fence.step(ln.Text) {
				i++
				continue
			}
		}
		if ln.Code || ln.Injected || ln.Cont {
			i++
			continue
		}
		st := x.start(ln.Text)
		if st.kind != startCommand {
			i++
			continue
		}
		var cmd Command
		if st.block {
			cmd = x.block(lines, i, st)
		} else {
			cmd = x.paragraph(lines, i, st)
		}
		if cmd.End <= i {
			cmd.End = i + 1
		}
		i = cmd.End
		if fires(cmd) {
			out = append(out, cmd)
		}
	}
	return out
}

// paragraph reads a command whose body runs over continuation lines.
func (x *Extractor) paragraph(lines []Line, i int, st start) Command {
	cmd := Command{NS: st.ns, Target: st.target, Line: i}
	var b bodyBuilder
	b.add(st.rest, " ")
	j := i + 1
	for ; j < len(lines); j++ {
		if x.ends(lines[j]) {
			cmd.Terminated = true
			break
		}
		b.add(strings.TrimSpace(clean(lines[j].Text)), " ")
	}
	cmd.End = j
	cmd.Body, cmd.Truncated = b.String(), b.truncated
	return cmd
}

// block reads a "<<<" command whose body keeps its line breaks.
func (x *Extractor) block(lines []Line, i int, st start) Command {
	cmd := Command{NS: st.ns, Target: st.target, Line: i, Block: true}
	limit := min(len(lines), i+1+MaxBodyLines+1)
	stop, closed, firstBlank := limit, false, -1
	for j := i + 1; j < limit; j++ {
		ln := lines[j]
		t := strings.TrimSpace(clean(ln.Text))
		if t == ">>>" {
			stop, closed = j, true
			break
		}
		if ln.Injected {
			stop = j
			break
		}
		if IsBlank(t) && firstBlank < 0 {
			firstBlank = j
			if x.mode == Screen {
				break
			}
		}
	}
	switch {
	case closed:
		cmd.End, cmd.Terminated = stop+1, true
	case firstBlank >= 0:
		stop = firstBlank
		cmd.End, cmd.Terminated = stop, true
	default:
		cmd.End = stop
		// Running out of lines is an open end; hitting the line cap is not.
		cmd.Terminated = stop < len(lines)
	}
	var b bodyBuilder
	for j := i + 1; j < stop; j++ {
		b.add(dedent(strings.TrimRightFunc(clean(lines[j].Text), unicode.IsSpace), st.indent), "\n")
	}
	cmd.Body, cmd.Truncated = b.String(), b.truncated
	return cmd
}

// ends reports whether ln ends a paragraph body.
func (x *Extractor) ends(ln Line) bool {
	if x.breaksEnd {
		return true
	}
	if ln.Cont {
		return false
	}
	if ln.Code || ln.Injected {
		return true
	}
	t := clean(ln.Text)
	if IsBlank(t) {
		return true
	}
	if x.mode == Markdown && isFence(t) {
		return true
	}
	return x.start(t).kind != startNone
}

// fires applies the guards that keep echoed instructions and empty
// messages from firing.
//
// The guards apply to the built-in namespaces only: a placeholder makes
// sense as a message's recipient (or a memory query echoed from the
// primer), while in a user namespace "@deploy:staging [v1.2.3]" or
// "@notify:text done" is what the user configured, and always fires.
func fires(c Command) bool {
	switch c.NS {
	case NSRelay, NSBroadcast, NSMemory:
	default:
		return true
	}
	if placeholder(c.Target) || bracketed(c.Body) {
		return false
	}
	switch c.NS {
	case NSRelay:
		// A message of one template word ("@relay:Bob message") is an
		// echoed instruction; a memory query of one word is not.
		return c.Target != "" && strings.TrimSpace(c.Body) != "" && !placeholder(c.Body)
	case NSBroadcast:
		return strings.TrimSpace(c.Body) != "" && !placeholder(c.Body)
	}
	return true
}

// placeholderWord reports whether w (lower case) only ever appears in
// instructions and templates, as a target or a whole body.
func placeholderWord(w string) bool {
	switch w {
	case "name", "agentname", "agent_name", "agent-name", "agent", "target", "recipient",
		"peer", "peername", "peer_name", "someone", "somebody", "username", "yourname",
		"your_name", "your-name", "other", "otheragent", "message", "msg", "text", "body",
		"...", "…":
		return true
	}
	return false
}

// placeholder reports whether s is a template slot rather than a value:
// a placeholderWord, or one bracketed token such as <name>, {name} or
// [name].
func placeholder(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	return len(s) <= 16 && placeholderWord(strings.ToLower(s)) || bracketed(s)
}

// bracketed reports whether s is one bracketed token: <name>, {name},
// [name] (parentheses are prose: "(see above)").
func bracketed(s string) bool {
	s = strings.TrimSpace(s)
	if len(s) < 2 {
		return false
	}
	want := closer(s[0])
	return want != 0 && s[len(s)-1] == want && strings.IndexByte(s[1:len(s)-1], want) < 0
}

// closer returns the bracket that closes open, or 0.
func closer(open byte) byte {
	switch open {
	case '<':
		return '>'
	case '{':
		return '}'
	case '[':
		return ']'
	}
	return 0
}

// bodyBuilder joins body parts under the caps.
type bodyBuilder struct {
	sb        strings.Builder
	lines     int
	truncated bool
}

func (b *bodyBuilder) add(part, sep string) {
	if b.truncated {
		return
	}
	if sep == " " && part == "" {
		return
	}
	if b.lines >= MaxBodyLines {
		b.truncated = true
		return
	}
	if b.lines > 0 {
		part = sep + part
	}
	b.lines++
	if room := MaxBodyBytes - b.sb.Len(); len(part) > room {
		cut := room
		for cut > 0 && !utf8.RuneStart(part[cut]) {
			cut--
		}
		b.sb.WriteString(part[:cut])
		b.truncated = true
		return
	}
	b.sb.WriteString(part)
}

func (b *bodyBuilder) String() string { return strings.TrimRightFunc(b.sb.String(), unicode.IsSpace) }

// clean makes text valid UTF-8 and drops a trailing CR.
func clean(s string) string {
	s = strings.TrimSuffix(s, "\r")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// dedent removes up to n leading spaces (a tab counts as one).
func dedent(s string, n int) string {
	i := 0
	for i < len(s) && i < n && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// IsBlank reports whether t holds nothing but white space and the glyphs a
// TUI draws around text (an empty bullet, quote or box row): such a line
// ends a body like an empty one.
func IsBlank(t string) bool {
	for _, r := range t {
		if !unicode.IsSpace(r) && !isGlyph(r) {
			return false
		}
	}
	return true
}

// isGlyph reports whether r is a bullet, prompt or box glyph that may come
// before a command.
func isGlyph(r rune) bool {
	switch r {
	case '●', '⏺', '•', '-', '*', '>', '›', '»', '│', '┃', '✦':
		return true
	}
	return false
}

// isFence reports whether t opens or closes a code fence.
func isFence(t string) bool {
	t = strings.TrimLeft(t, " \t")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// fenceState follows ``` and ~~~ fences in markdown.
type fenceState struct {
	char byte // 0 outside a fence
	n    int  // length of the opening run
}

// step reports whether the line is a fence or inside one, updating state.
func (f *fenceState) step(line string) bool {
	t := strings.TrimLeft(line, " \t")
	run := 0
	var c byte
	if len(t) > 0 && (t[0] == '`' || t[0] == '~') {
		c = t[0]
		for run < len(t) && t[run] == c {
			run++
		}
	}
	if f.char == 0 {
		if run >= 3 {
			f.char, f.n = c, run
			return true
		}
		return false
	}
	if c == f.char && run >= f.n && strings.TrimSpace(t[run:]) == "" {
		f.char, f.n = 0, 0
	}
	return true
}

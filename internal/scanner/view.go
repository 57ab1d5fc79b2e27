package scanner

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/screen"
)

// ctxRows is how many rows before the oldest open line a view reaches back,
// so that a command's context (the text before it) is there.
const ctxRows = 8

// maxLogical bounds the text of one logical line joined from soft-wrapped
// rows: a little more than a body may hold, so that a capped body is still
// marked truncated.
const maxLogical = patterns.MaxBodyBytes + 4096

// phys is one physical row of a view: a scrolled-off line or a screen row.
type phys struct {
	text    string
	wrapped bool
	code    bool
	abs     int64     // absolute row: rows scrolled off before it
	row     int       // screen row; -1 for a scrolled-off line
	changed time.Time // last text change; zero for scrolled-off lines
	stale   bool      // cut or mis-wrapped by a resize (see rowState)
	mark    screen.Mark
}

// logical is one logical line: rows joined across soft wraps.
type logical struct {
	first, last int  // phys indices
	chrome      bool // the TUI's own row (status, spinner, rule, input box)
}

// view is what one pass reads: rows and the logical lines made of them.
type view struct {
	phys  []phys
	info  []logical
	lines []patterns.Line
	flat  []string // collapsed text of each line, filled as asked for
	done  []bool
}

// collapsed returns line k's text with white space runs folded.
func (v *view) collapsed(k int) string {
	if len(v.done) != len(v.lines) {
		n := len(v.lines)
		v.flat, v.done = slices.Grow(v.flat[:0], n)[:n], slices.Grow(v.done[:0], n)[:n]
		clear(v.flat)
		clear(v.done)
	}
	if !v.done[k] {
		v.flat[k], v.done[k] = collapse(v.lines[k].Text), true
	}
	return v.flat[k]
}

// refreshRows re-reads the screen rows if anything changed and reports
// whether any row's text changed. A change is dated to the last Write, the
// latest moment it can have happened. Changes accumulate in s.rowsChanged
// and s.contentChanged until a full pass reads them (evaluate).
func (s *Scanner) refreshRows() bool {
	now := s.lastWrite
	v := s.scr.Version()
	if v == s.lastVersion && s.lastVersion != 0 {
		return false
	}
	s.lastVersion = v
	changed := false
	maybe := s.maybeChurn[:0] // changed rows that may be churn
	for y := range s.rows {
		// Only rows whose version moved are read; the screen renders a
		// row's text again only when its cells changed (a row that merely
		// scrolled keeps its text).
		if s.scr.RowVersion(y) == s.rows[y].version && !s.rows[y].changed.IsZero() {
			continue
		}
		l := s.scr.Line(y)
		r := &s.rows[y]
		r.version = l.Version
		r.mark = l.Mark // not a change of text: the row need not settle again
		if l.Text != r.text || l.Wrapped != r.wrapped || r.changed.IsZero() {
			at, prompt := mayMention(l.Text), s.isPromptRow(l.Text)
			// An input box's row moves the end of what a pass reads
			// (inputRow): never churn.
			if r.changed.IsZero() || r.at || at || r.wrapped || l.Wrapped || r.prompt || prompt {
				s.contentChanged, s.lastContent = true, now
			} else {
				maybe = append(maybe, y)
			}
			s.learnEcho(l.Text, l.Mark)
			r.text, r.wrapped, r.stale, r.at = l.Text, l.Wrapped, s.staleText[l.Text], at
			r.code = s.isCode(l)
			r.faint = faintAfterFirst(l)
			r.busy = s.hasBusyText(l.Text)
			r.prompt = prompt
			r.dialog = s.hasDialogText(l.Text)
			r.changed = now
			changed = true
		}
	}
	if len(maybe) > 0 && !s.churn(maybe) {
		s.contentChanged, s.lastContent = true, now
	}
	s.maybeChurn = maybe
	if changed {
		s.lastChange = now
		s.rowsChanged = true
	}
	return changed
}

// churn reports whether the changed rows ys (none holding a mention, an
// input box or soft-wrapped, before or after) are churn: a spinner's or status line's
// redraw, a line streamed below everything, that no pass can read a
// command in and that can change no command's answer. Each is a logical
// line of its own (the row above is not soft-wrapped into it) below every
// row with a mention: not a command, nor part of one, nor the text before
// one (its context, docs/scanner.md), nor a row a fired command was on.
func (s *Scanner) churn(ys []int) bool {
	lastAt := -1
	for y := len(s.rows) - 1; y >= 0; y-- {
		if s.rows[y].at {
			lastAt = y
			break
		}
	}
	for _, y := range ys {
		if y <= lastAt || y > 0 && s.rows[y-1].wrapped {
			return false
		}
	}
	return true
}

// buildView gathers the rows from viewFrom (less some context) to the
// bottom of the screen and turns them into logical lines.
// The view's slices are the scanner's, reused from pass to pass (a view
// never outlives its pass), so a pass allocates nothing per row.
func (s *Scanner) buildView() *view {
	v := &s.view
	v.phys, v.info, v.lines = v.phys[:0], v.info[:0], v.lines[:0]
	v.flat, v.done = v.flat[:0], v.done[:0]
	if len(s.hist) > 0 {
		from := s.viewFrom - ctxRows
		i := int(min(max(from-s.hist[0].abs, 0), int64(len(s.hist))))
		// Start at the start of a logical line: a row soft-wrapped from
		// the row before it read alone would put the middle of a line at
		// a line start (a mention wrapped to column 0 would fire).
		back := maxLogical/max(s.cols, 1) + 1
		for ; i > 0 && s.hist[i-1].wrapped && back > 0; back-- {
			i--
		}
		for k, h := range s.hist[i:] {
			p := phys{text: h.text, wrapped: h.wrapped, code: h.code, abs: h.abs, row: -1, stale: h.stale, mark: h.mark}
			if k == 0 && i > 0 && s.hist[i-1].wrapped {
				p.mark |= markCut // its start is beyond the cap
			}
			v.phys = append(v.phys, p)
		}
	}
	input := s.inputRow()
	for y, r := range s.rows {
		p := phys{text: r.text, wrapped: r.wrapped, code: r.code, abs: s.scrolled + int64(y), row: y, changed: r.changed, stale: r.stale, mark: r.mark}
		if input >= 0 && y >= input {
			p.text, p.wrapped = "", false
		}
		v.phys = append(v.phys, p)
	}
	// prevRow is the last row of the previous line when it is text the
	// TUI may have wrapped (not blank, code or chrome), else -1. Whether
	// it ends a sentence is worked out only when a mention follows it.
	prevRow := -1
	for i := 0; i < len(v.phys); {
		j := i
		text := v.phys[i].text
		code := v.phys[i].code
		mark := v.phys[i].mark
		if v.phys[j].wrapped && j+1 < len(v.phys) {
			var sb strings.Builder
			sb.WriteString(text)
			for v.phys[j].wrapped && j+1 < len(v.phys) {
				// Rows past the cap are consumed but not kept: the body
				// is cut there anyway, and is marked truncated.
				if sb.Len() <= maxLogical {
					padTo(&sb, v.phys[j].text, s.cols)
					sb.WriteString(v.phys[j+1].text)
				}
				code = code && v.phys[j+1].code
				mark |= v.phys[j+1].mark
				j++
			}
			text = sb.String()
		}
		info := logical{first: i, last: j}
		if input >= 0 && v.phys[i].row >= input {
			info.chrome = true
		} else if s.isChrome(text) {
			info.chrome = true
			if !strings.Contains(text, "@") {
				text = ""
			}
		}
		ln := patterns.Line{Text: text, Code: code}
		hasAt := strings.IndexByte(text, '@') >= 0
		if mark&^markHuman != 0 || hasAt && s.isInjected(text) || s.cues.InputHistory && s.isPromptRow(text) {
			// Typed in by relay, the rest of a line cut by a reset
			// (marks.go), or an input the human submitted: never a
			// command, and the end of any body.
			ln.Injected = true
		}
		blank := strings.TrimSpace(text) == ""
		if hasAt && prevRow >= 0 && !blank && !code && !s.cues.LineBreaksEnd &&
			s.wrappedInto(v.phys[prevRow].text, text) {
			// The first word would not have fitted on the previous row,
			// and that row does not end a sentence: the TUI wrapped here,
			// so this row goes on with the sentence (a mention such as
			// "ask @relay:Carol" wrapped to a row start is not a command).
			ln.Cont = true
		}
		prevRow = -1
		if !blank && !code && !info.chrome {
			prevRow = j
		}
		v.info = append(v.info, info)
		v.lines = append(v.lines, ln)
		i = j + 1
	}
	return v
}

// wrappedInto reports whether the TUI wrapped the row prev into text: prev
// does not end a sentence, and the first word of text would not have
// fitted after it.
func (s *Scanner) wrappedInto(prev, text string) bool {
	last := strings.TrimRight(prev, " ")
	if last == "" {
		return false
	}
	if r, _ := utf8.DecodeLastRuneInString(last); strings.ContainsRune(".!?:;…)]}\"'`", r) {
		return false
	}
	return runewidth.StringWidth(last)+1+firstWordWidth(text) > s.cols-s.cues.WrapSlack
}

// inputRow returns the screen row of the input box (the last row starting
// with a prompt glyph; with Cues.InputFrame the first row of the last run
// of such rows), or -1.
func (s *Scanner) inputRow() int {
	top, _ := s.inputBox()
	return top
}

// inputBox returns the first and last screen rows of the input box, or
// -1, -1: one row, unless Cues.InputFrame.
func (s *Scanner) inputBox() (top, bottom int) {
	if s.cues.Prompt == "" {
		return -1, -1
	}
	for y := len(s.rows) - 1; y >= 0; y-- {
		if !s.rows[y].prompt {
			continue
		}
		top = y
		for s.cues.InputFrame && top > 0 && s.rows[top-1].prompt {
			top--
		}
		return top, y
	}
	return -1, -1
}

// isPromptRow reports whether text starts with a prompt glyph. It is worked
// out once when the row's text changes (rowState.prompt).
func (s *Scanner) isPromptRow(text string) bool {
	_, ok := s.promptGlyph(text)
	return ok
}

// promptGlyph returns what follows the prompt glyph of an input row (and
// the mode words before it, Cues.PromptModes), and whether text is one.
func (s *Scanner) promptGlyph(text string) (string, bool) {
	if s.cues.Prompt == "" {
		return "", false
	}
	t := strings.TrimLeft(text, " ")
	for again := len(s.cues.PromptModes) > 0; again; {
		again = false
		for _, w := range s.cues.PromptModes {
			rest, ok := strings.CutPrefix(t, w)
			if !ok || rest == "" {
				continue
			}
			if r, _ := utf8.DecodeRuneInString(rest); r == ' ' || strings.ContainsRune(s.cues.Prompt, r) {
				t, again = strings.TrimLeft(rest, " "), true
				break
			}
		}
	}
	r, size := utf8.DecodeRuneInString(t)
	if !strings.ContainsRune(s.cues.Prompt, r) {
		return "", false
	}
	return t[size:], true
}

// isChrome reports whether text is the TUI's own: a busy cue, a horizontal
// rule, or a spinner row.
func (s *Scanner) isChrome(text string) bool {
	t := strings.TrimSpace(text)
	if t == "" {
		return false
	}
	for _, b := range s.cues.Busy {
		if strings.Contains(t, b) {
			return true
		}
	}
	if isRule(t) {
		return true
	}
	if s.cues.Spinner != "" {
		r, _ := utf8.DecodeRuneInString(t)
		if strings.ContainsRune(s.cues.Spinner, r) && strings.Contains(t, "…") {
			return true
		}
	}
	return false
}

// isRule reports whether t is a horizontal rule of box-drawing characters.
func isRule(t string) bool {
	n := 0
	for _, r := range t {
		switch r {
		case '─', '━', '═', '▄', '▀', '╌', '┄':
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 3
}

// isInjected reports whether text (less its glyphs) is part of something
// the wrapper typed, or of a row the child drew while it was typed.
func (s *Scanner) isInjected(text string) bool {
	if len(s.injected) == 0 && len(s.typedCmds.order) == 0 {
		return false
	}
	t := injectedCore(text)
	if len(t) < minInjected {
		return false
	}
	return s.injLines[t] > 0 || s.searchInjected(t) || s.typedCmds.holds(t)
}

// searchInjected reports whether the row core t is a part of a text typed:
// what the line index of isInjected only makes quicker.
func (s *Scanner) searchInjected(t string) bool {
	for _, in := range s.injected {
		if strings.Contains(in.text, t) {
			return true
		}
	}
	return false
}

// injectedCore returns a row's text as it is matched against typed text:
// without the glyphs before it, a box's right edge, the ellipsis of a row
// cut short, and with white space folded.
func injectedCore(text string) string {
	t := collapse(strings.TrimLeftFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("●⏺•-*>›»│┃✦❯", r)
	}))
	t = strings.TrimRightFunc(t, func(r rune) bool { return unicode.IsSpace(r) || r == '│' || r == '┃' })
	return strings.TrimRightFunc(strings.TrimSuffix(t, "…"), unicode.IsSpace)
}

// learnEcho remembers the text of a row the child drew while relay typed
// (markTyped) that starts with a mention the typed text holds too: the
// agent's rendering of the typed text (markdown drawn, lines wrapped in a
// box), so that when it draws it again later (a redraw of its history) the
// copy is known by its text too. Rows starting with other mentions (the
// agent's own earlier lines, redrawn meanwhile) are not learnt.
func (s *Scanner) learnEcho(text string, mark screen.Mark) {
	if mark&markTyped == 0 || strings.IndexByte(text, '@') < 0 {
		return
	}
	t := injectedCore(text)
	mention, _, _ := strings.Cut(t, " ")
	if len(t) < 6 || !strings.HasPrefix(mention, "@") || !strings.Contains(mention, ":") {
		return
	}
	for _, in := range s.injected {
		if strings.Contains(in.text, mention) {
			s.rememberInjected(t, []string{t})
			return
		}
	}
}

// isCode reports whether most of l's visible characters are drawn in a code
// colour.
func (s *Scanner) isCode(l screen.Line) bool {
	if len(s.cues.CodeColors) == 0 || l.Text == "" {
		return false
	}
	code, all := 0, 0
	for _, sp := range l.Spans {
		if sp.Start < 0 || sp.End > len(l.Text) || sp.Start >= sp.End {
			continue
		}
		n := len(l.Text[sp.Start:sp.End]) - strings.Count(l.Text[sp.Start:sp.End], " ")
		all += n
		for _, c := range s.cues.CodeColors {
			if sp.Style.FG == c {
				code += n
				break
			}
		}
	}
	return all > 0 && code*2 > all
}

// faintAfterFirst reports whether every visible character after the first
// (the prompt glyph) is faint: placeholder text, not a draft.
func faintAfterFirst(l screen.Line) bool {
	t := l.Text
	i := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsSpace(r) })
	if i < 0 {
		return true
	}
	_, size := utf8.DecodeRuneInString(t[i:])
	after := i + size
	for _, sp := range l.Spans {
		if sp.End <= after || sp.Start >= len(t) || sp.End > len(t) {
			continue
		}
		seg := t[max(sp.Start, after):sp.End]
		if strings.TrimSpace(seg) != "" && !sp.Style.Faint {
			return false
		}
	}
	return true
}

// padTo pads the soft-wrapped row just written to sb with spaces to cols
// columns (it lost its trailing blanks when it was read).
func padTo(sb *strings.Builder, row string, cols int) {
	for w := runewidth.StringWidth(row); w < cols; w++ {
		sb.WriteByte(' ')
	}
}

// firstWordWidth returns the width of the first word of text.
func firstWordWidth(text string) int {
	t := strings.TrimLeftFunc(text, unicode.IsSpace)
	if i := strings.IndexFunc(t, unicode.IsSpace); i >= 0 {
		t = t[:i]
	}
	return runewidth.StringWidth(t)
}

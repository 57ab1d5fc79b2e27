package scanner

import (
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/relayhq/relay/internal/patterns"
)

// ctxBytes is how much of the text before a command identifies where it
// stands in the conversation (see docs/scanner.md).
const ctxBytes = 120

// maxOccurrences bounds the commands remembered for de-duplication.
const maxOccurrences = 1024

// occurrence is one command that fired: what it said, where, and after
// what text.
type occurrence struct {
	key   string    // namespace, target and collapsed body
	ctx   string    // up to ctxBytes of the collapsed text before it
	abs   int64     // absolute row of its first line when last seen
	seen  uint64    // the pass that last matched it
	when  time.Time // when it was last matched
	epoch uint64    // the screen epoch it was last matched in
	text  string    // its first row as drawn
	// onRow is true while the row at abs is known to show it (it fired or
	// was matched there, or relocate followed it there) in this epoch.
	onRow bool
	// lost is when relocate last failed to find it (zero while found): a
	// frame half drawn may hide it for a moment.
	lost time.Time
}

// candidate is a final command found in this pass.
type candidate struct {
	cmd patterns.Command
	key string
	ctx string
	abs int64
	row int
	// text is the first row's text, by which a full-screen TUI's redraws
	// are followed (see relocate).
	text string
	// ready is false for a command still open (streaming, moving): it may
	// keep an occurrence it matches up to date, but never fires.
	ready bool
	occ   *occurrence
}

// evaluate is one pass: re-read the rows, update the state, extract the
// commands, fire the new final ones. final treats everything as final.
func (s *Scanner) evaluate(final bool) {
	now := s.now()
	s.lastEval = now
	s.refreshRows()
	s.updateState(now)
	if !final && !s.contentChanged && s.pending == 0 && s.settled && s.epoch == s.passEpoch {
		// Nothing changed, or only rows no command can be read on
		// (churn): the last pass's answer stands, and with it every
		// command it matched (see lastSeen). Fired commands still
		// follow their rows (relocate is cheap, and no-op with none).
		s.stood = now
		if s.rowsChanged {
			s.rowsChanged = false
			s.relocate(now)
		}
		return
	}
	s.pass++
	if s.rowsChanged {
		s.relocate(now)
	}
	s.rowsChanged, s.contentChanged, s.passEpoch = false, false, s.epoch
	v := s.buildView()
	cmds := s.ex.Extract(v.lines)
	busyCue := s.hasBusyCue()
	quiet := s.cues.QuietTime
	cursorPhys := -1
	if s.scr.CursorVisible() {
		_, cy := s.scr.Cursor()
		cursorPhys = len(v.phys) - len(s.rows) + cy
	}
	waiting := false
	oldestOpen := s.scrolled
	var cands []*candidate
	for _, c := range cmds {
		first := v.info[c.Line].first
		last := v.info[c.End-1].last
		if cut(v, first, last) {
			continue // never final, so nothing to wait for either
		}
		ctx, ctxFirst := contextBefore(v, c.Line)
		ready := final || s.ready(v, c, ctxFirst, first, last, now, quiet, busyCue, cursorPhys)
		if !ready {
			waiting = true
			oldestOpen = min(oldestOpen, v.phys[first].abs)
		}
		cands = append(cands, &candidate{
			cmd:   c,
			key:   c.NS + "\x00" + c.Target + "\x00" + collapse(c.Body),
			ctx:   ctx,
			abs:   v.phys[first].abs,
			row:   v.phys[first].row,
			text:  v.phys[first].text,
			ready: ready,
		})
	}
	for _, cd := range s.match(cands, now) {
		ev := Event{Kind: EventCommand, Time: now, Command: cd.cmd, Row: cd.row}
		if cd.row < 0 {
			ev.Row = int(cd.abs - s.scrolled)
		}
		s.events = append(s.events, ev)
	}
	s.viewFrom = oldestOpen
	s.pending = 0
	s.settled = !waiting && now.Sub(s.lastContent) >= quiet
}

// ready reports whether command c, on phys rows first..last, is final: its
// rows and those of its context (from ctxFirst) are quiet, something ended
// it, the cursor has moved past it, and, if the agent shows it is busy,
// reply text follows it (so it is not the paragraph still being streamed).
func (s *Scanner) ready(v *view, c patterns.Command, ctxFirst, first, last int, now time.Time, quiet time.Duration, busyCue bool, cursorPhys int) bool {
	if c.Truncated && v.phys[first].row < 0 {
		// Cut at the caps and begun in the scrollback: more rows cannot
		// change it, and waiting longer could lose its start.
		return true
	}
	if !c.Terminated {
		return false
	}
	if s.cues.LineBreaksEnd && cursorPhys > last {
		// A plain terminal: the line break was written and the cursor has
		// moved on; the program does not come back to rewrite it.
		return true
	}
	for p := min(ctxFirst, first); p <= last; p++ {
		if v.phys[p].row >= 0 && now.Sub(v.phys[p].changed) < quiet {
			return false
		}
	}
	// The cursor on the line that ended the body holds the command (the
	// program may still be writing there), unless that line is the TUI's
	// own (its input box, where the cursor waits for the human): a prompt
	// drawn right after the command ends it, and nothing the human types
	// there joins its body.
	term := last
	if c.End < len(v.info) && !v.info[c.End].chrome {
		term = v.info[c.End].last
	}
	if cursorPhys >= first && cursorPhys <= term {
		return false
	}
	if busyCue && v.phys[last].row >= 0 {
		return s.replyFollows(v, c.End, v.phys[last].changed)
	}
	return true
}

// cut reports whether a resize cut or mis-wrapped one of the phys rows
// first..last: the command reads wrong there and never fires, even at the
// end.
func cut(v *view, first, last int) bool {
	for p := first; p <= last; p++ {
		if v.phys[p].stale {
			return true
		}
	}
	return false
}

// maxParagraphGap is the most blank rows between two paragraphs of one
// reply; text further down is the TUI's own (a footer, a status line).
const maxParagraphGap = 3

// replyFollows reports whether the reply goes on after logical line end:
// the next non-blank line that is not the TUI's own is near (a paragraph
// gap away) and was drawn no earlier than the command (streaming goes top
// to bottom; a status line drawn before it does not count).
func (s *Scanner) replyFollows(v *view, end int, since time.Time) bool {
	gap := 0
	for k := end; k < len(v.info); k++ {
		if v.info[k].chrome {
			return false
		}
		if patterns.IsBlank(v.lines[k].Text) {
			if gap++; gap > maxParagraphGap {
				return false
			}
			continue
		}
		p := v.phys[v.info[k].first]
		return p.row < 0 || !p.changed.Before(since)
	}
	return false
}

// contextBefore returns up to ctxBytes of the collapsed text of the reply
// lines before line i, and the first phys row it comes from: it says where
// a command stands in the conversation, whatever the screen width or the
// row it is drawn on.
func contextBefore(v *view, i int) (string, int) {
	var parts []string
	n := 0
	firstPhys := v.info[i].first
	for k := i - 1; k >= 0 && n < ctxBytes; k-- {
		if v.info[k].chrome {
			continue
		}
		t := v.collapsed(k)
		if t == "" {
			continue
		}
		parts = append(parts, t)
		n += len(t) + 1
		firstPhys = v.info[k].first
	}
	var sb strings.Builder
	for k := len(parts) - 1; k >= 0; k-- {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(parts[k])
	}
	ctx := sb.String()
	if len(ctx) > ctxBytes {
		cut := len(ctx) - ctxBytes
		for cut < len(ctx) && !utf8.RuneStart(ctx[cut]) {
			cut++
		}
		ctx = ctx[cut:]
	}
	return ctx, firstPhys
}

// recentMatch is how long after an occurrence was last seen a copy after
// a shorter or longer context (one cut by the top of the view) may still be
// taken for it: long enough for a redraw or a resize, short enough that the
// same words in a later reply at the top of a fresh screen fire again.
const recentMatch = 30 * time.Second

// compatible reports whether a candidate after context c can be occurrence
// o: the same context, or, if o was seen recently (at seen, see lastSeen),
// one context cut short (by the top of the view) and a suffix of the other.
func compatible(o *occurrence, c string, now, seen time.Time) bool {
	if o.ctx == c {
		return true
	}
	if now.Sub(seen) > recentMatch {
		return false
	}
	if len(c) < len(o.ctx) {
		return strings.HasSuffix(o.ctx, c)
	}
	return strings.HasSuffix(c, o.ctx)
}

// lastSeen is when occurrence o was last known to be where it was read:
// when a pass matched it or, for one the last full pass matched, the last
// time that pass's answer stood (a pass skipped because only churn
// changed). A command that scrolled to the top of the view before a long
// spell of churn (a minute of a spinner) is seen there, its context cut by
// the view's top, by the next full pass: it is the same occurrence, not
// one last seen a minute ago.
func (s *Scanner) lastSeen(o *occurrence) time.Time {
	if o.seen == s.pass-1 && s.stood.After(o.when) {
		return s.stood
	}
	return o.when
}

// match pairs candidates with commands that already fired and returns the
// ready ones that are new. A candidate is the same occurrence as one that
// fired when it has the same words, stands after the same text (see
// compatible), and that occurrence is not already matched in this pass:
// first an occurrence on the same absolute row (a redraw in place, a
// scroll, which keeps absolute rows), then, where content can move without
// scrolling (the alternate screen, or after a clear or a resize), the
// nearest one. The same words after different text, or beside their
// earlier copy, are new.
func (s *Scanner) match(cands []*candidate, now time.Time) []*candidate {
	for _, cd := range cands {
		if o := s.occ.at(cd.key, cd.abs); o != nil && o.seen != s.pass && ((o.onRow && o.epoch == s.epoch) || compatible(o, cd.ctx, now, s.lastSeen(o))) {
			s.claim(o, cd, now)
		}
	}
	alt := s.scr.AltScreen()
	var fresh []*candidate
	for _, cd := range cands {
		if cd.occ != nil {
			continue
		}
		var best *occurrence
		for _, o := range s.occ.byKey[cd.key] {
			if o.seen == s.pass || (!alt && o.epoch == s.epoch) || !compatible(o, cd.ctx, now, s.lastSeen(o)) {
				continue
			}
			if best == nil || absDiff(o.abs, cd.abs) < absDiff(best.abs, cd.abs) {
				best = o
			}
		}
		if best != nil {
			s.claim(best, cd, now)
			continue
		}
		if !cd.ready {
			continue
		}
		o := &occurrence{key: cd.key, ctx: cd.ctx, abs: cd.abs, seen: s.pass, when: now, epoch: s.epoch, text: cd.text, onRow: cd.row >= 0}
		cd.occ = o
		s.occ.add(o)
		fresh = append(fresh, cd)
	}
	s.occ.trim(maxOccurrences)
	return fresh
}

// claim marks o as matched by cd in this pass and moves it there.
func (s *Scanner) claim(o *occurrence, cd *candidate, now time.Time) {
	o.seen, o.when, o.epoch, o.text, o.onRow = s.pass, now, s.epoch, cd.text, cd.row >= 0
	s.occ.move(o, cd.abs)
	if len(cd.ctx) >= len(o.ctx) {
		o.ctx = cd.ctx
	}
	cd.occ = o
}

// relocate follows the commands that fired and are on screen to where the
// program redrew them: a full-screen TUI scrolls by drawing every row
// again, one or a few rows higher, which moves a line without scrolling it.
// Each occurrence keeps its row if that row still shows its first line,
// else it moves to the nearest row that does (preferring rows above it:
// content moves up), each row taken once. Occurrences not found stay
// where they were; once missing from a settled frame they are matched by
// context only. Not across a clear or
// a resize (a new epoch): there, context decides.
func (s *Scanner) relocate(now time.Time) {
	var live []*occurrence
	for _, o := range s.occ.order {
		if y := o.abs - s.scrolled; o.onRow && o.epoch == s.epoch && y >= 0 && y < int64(len(s.rows)) {
			live = append(live, o)
		}
	}
	if len(live) == 0 {
		return
	}
	sort.Slice(live, func(i, j int) bool { return live[i].abs < live[j].abs })
	taken := make([]bool, len(s.rows))
	var lost []*occurrence
	for _, o := range live {
		if y := int(o.abs - s.scrolled); !taken[y] && s.rows[y].text == o.text {
			taken[y] = true
			o.lost = time.Time{}
			continue
		}
		lost = append(lost, o)
	}
	for _, o := range lost {
		old := int(o.abs - s.scrolled)
		best := -1
		for d := 1; d < len(s.rows) && best < 0; d++ {
			for _, y := range []int{old - d, old + d} {
				if y >= 0 && y < len(s.rows) && !taken[y] && s.rows[y].text == o.text {
					best = y
					break
				}
			}
		}
		switch {
		case best >= 0:
			taken[best] = true
			s.occ.move(o, s.scrolled+int64(best))
			o.lost = time.Time{}
		case o.lost.IsZero():
			o.lost = now
		case now.Sub(o.lost) > s.cues.QuietTime:
			// Gone from a frame that had time to settle.
			o.onRow = false
		}
	}
}

// absKey finds an occurrence by its words and absolute row.
type absKey struct {
	key string
	abs int64
}

// occurrences are the commands that fired, indexed for matching.
type occurrences struct {
	order []*occurrence // oldest first
	byKey map[string][]*occurrence
	byAbs map[absKey]*occurrence
}

func (m *occurrences) at(key string, abs int64) *occurrence { return m.byAbs[absKey{key, abs}] }

func (m *occurrences) add(o *occurrence) {
	if m.byKey == nil {
		m.byKey = map[string][]*occurrence{}
		m.byAbs = map[absKey]*occurrence{}
	}
	m.order = append(m.order, o)
	m.byKey[o.key] = append(m.byKey[o.key], o)
	m.byAbs[absKey{o.key, o.abs}] = o
}

func (m *occurrences) move(o *occurrence, abs int64) {
	if k := (absKey{o.key, o.abs}); m.byAbs[k] == o {
		delete(m.byAbs, k)
	}
	o.abs = abs
	m.byAbs[absKey{o.key, abs}] = o
}

// trim keeps the newest half once there are more than max.
func (m *occurrences) trim(max int) {
	if len(m.order) <= max {
		return
	}
	keep := m.order[len(m.order)-max/2:]
	*m = occurrences{}
	for _, o := range keep {
		m.add(o)
	}
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

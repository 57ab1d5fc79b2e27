// Package scanner turns a child program's terminal output into relay
// commands, each exactly once, and into agent state (busy, idle, a draft in
// the input box).
//
// The flow, one stage per file:
//
//	bytes ──Write/Run──▶ screen.Screen (terminal model)        scanner.go
//	rows + scrolled-off rows ──▶ logical lines, stable or not    view.go
//	logical lines ──patterns.Extractor──▶ candidate commands     scanner.go
//	candidates ──occurrences (where, when, context)──▶ events    dedup.go
//	rows ──Cues──▶ busy / idle / draft                           state.go
//
// What it reports, Event and State, is declared in event.go.
//
// A Scanner is fed by one goroutine (Write, or Run with a Source); the
// wrapper may call MarkInjected, Resize and Skip from others. Events go to
// subscribers synchronously, after the scanner's lock is released; a
// subscriber must not block. docs/scanner.md explains the de-duplication.
package scanner

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/relayhq/relay/internal/alarm"
	"github.com/relayhq/relay/internal/mailbox"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/screen"
)

// Source yields the child's output for Run. Next blocks until bytes are
// there; skipped > 0 says that many bytes were dropped before chunk because
// the scanner fell behind (the wrapper's tap never waits for it). At the end
// it returns io.EOF. When ctx ends first it returns ctx's error and keeps
// what it has for the next call: Run waits with a deadline during a flood.
type Source interface {
	Next(ctx context.Context) (chunk []byte, skipped int64, err error)
}

// Taker is a Source that is told when the chunk it handed out last is on
// the screen model, where Run would otherwise not call Next for a while:
// before it leaves a flood's window to pile up unread (flood.go). What
// watches the screen after each chunk (a shell's readiness for relay's
// next injection) hears it then, not a window later.
type Taker interface {
	Source
	Taken()
}

// Options configures a Scanner. The zero value means an 80x24 screen, the
// built-in namespaces, generic cues and the real clock.
type Options struct {
	Cols, Rows int
	// Namespaces are the registered namespaces; nil means the built-ins.
	Namespaces *patterns.Namespaces
	// Cues are the profile's screen cues (a profile's, from agents/).
	Cues Cues
	// Now is the clock; nil means time.Now. Tests and `relay scan` of an
	// asciicast inject their own.
	Now func() time.Time
	// Tick is how often Run re-reads the screen when no output comes, so
	// that quiet rows become final; zero means a quarter of QuietTime.
	Tick time.Duration
}

// Feeding limits: output is fed to the screen in pieces of at most
// feedPiece bytes, and the rows scrolled off are read as soon as there are
// forcePass of them, so that a fast `cat` never piles up more than
// maxHistory rows.
const (
	feedPiece  = 2048
	forcePass  = 1024
	maxHistory = 8192
)

// Scanner reads commands and state off a terminal stream.
type Scanner struct {
	mu    sync.Mutex
	scr   *screen.Screen
	cols  int
	nrows int
	ex    *patterns.Extractor
	cues  Cues
	now   func() time.Time
	tick  time.Duration
	// kick tells Run's clock that output came and was not read yet: it
	// reads the screen settleTime after, not a whole tick later (a paste
	// shown in an input box, a turn's end drawn).
	kick mailbox.Signal
	// floodAt is the output rate (bytes/s) above which Run skips output
	// (floodRate; tests of what Run reads raise it).
	floodAt float64
	// floodClock is flood control's clock; the zero value is the real one
	// (tests of the flood rule make their own).
	floodClock floodClock

	// readNow says the Write now ending read the screen; waitable, read
	// by CanWait from the output's goroutine, that the last thing the
	// scanner did was such a Write, after which the screen was settled
	// (only churn changed within the quiet time, nothing waits to be read)
	// and the agent busy (unlockAndEmit sets it, each other change clears
	// it).
	readNow  bool
	waitable atomic.Bool
	// arrived is when output last came, offered to CanWait or written, in
	// Unix nanoseconds: CanWait lets only frames that follow closely wait.
	arrived atomic.Int64

	rows        []rowState // per screen row
	lastVersion uint64
	lastChange  time.Time // last time a row's text changed
	lastContent time.Time // last time a row other than churn changed (view.go)
	// rowsChanged and contentChanged say that rows (any, or other than
	// churn) changed since the last full pass.
	rowsChanged, contentChanged bool
	passEpoch                   uint64 // the epoch of the last full pass
	maybeChurn                  []int  // refreshRows's rows to check, reused
	// dormant says Run's clock sleeps until output or a change comes
	// (clock.go); wake ends it.
	dormant bool
	// quietWait says Run's clock waits for the screen's quiet time on
	// alarm (nil outside Run), which Write moves (moveQuiet).
	quietWait bool
	alarm     *alarm.Alarm
	wokeEarly int // the quiet alarm fired before the screen was quiet
	lastEval  time.Time
	lastWrite time.Time // rows can only have changed by then
	settled   bool      // the last pass found nothing waiting

	view     view       // the buffers of the last pass's view, reused
	hist     []histLine // rows scrolled off, oldest first
	scrolled int64      // rows scrolled off so far: abs index of screen row 0
	viewFrom int64      // abs index where the next view must start
	pending  int        // rows scrolled off since the last pass
	tail     []byte     // the last bytes fed, for a clear split across writes
	// staleText holds the rows the last resize cut or left mis-wrapped.
	staleText map[string]bool

	occ  occurrences
	pass uint64
	// stood is the last time a pass was skipped because only churn
	// changed: the last full pass's answer stood then (lastSeen).
	stood time.Time
	// epoch changes whenever content may move without scrolling: a clear,
	// a resize, a reset, a switch of screens.
	epoch     uint64
	oscState  string // the CLI's own state report: "working", "idle", "done", …
	quietOnce bool   // the screen has been idle by quiet, its input box drawn
	worked    bool   // since then the CLI has said it is working
	injected  []injectedText
	// injLines counts the typed lines by their core: a row that echoes
	// a whole line (a stream into a shell, row after row) is found
	// without searching every text typed.
	injLines map[string]int
	// typedCmds: every command relay typed, for the whole session
	// (typedcmds.go).
	typedCmds typedCommands
	inj       injection
	human     bool // the human's line is unfinished (HumanTyping)

	state      State
	stateKnown bool
	events     []Event

	// The terminal string (OSC, DCS, …) open at the end of the last Write,
	// numbered by the screen, and when it was first seen open.
	strSeq   uint64
	strSince time.Time

	skipped atomic.Int64

	subMu sync.Mutex
	subs  map[int]func(Event)
	subID int
}

// rowState is what the scanner remembers of one screen row.
type rowState struct {
	text    string
	wrapped bool
	code    bool
	faint   bool // every non-blank character is faint
	busy    bool // text holds a busy cue (hasBusyText), kept with text
	at      bool // text holds an @, kept with text
	prompt  bool // text starts with a prompt glyph (isPromptRow), kept with text
	dialog  bool // text holds a dialog cue (Cues.Dialogs), kept with text
	// stale marks a row a resize may have cut or left wrapped at the old
	// width, until the program draws something else there.
	stale   bool
	mark    screen.Mark // see marks.go: the row never fires
	version uint64
	changed time.Time
}

// histLine is a row that scrolled off: final by nature.
type histLine struct {
	text    string
	wrapped bool
	code    bool
	stale   bool // cut by a resize (see rowState)
	mark    screen.Mark
	abs     int64
}

// New returns a Scanner.
func New(opts Options) *Scanner {
	cues := opts.Cues.withDefaults()
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	tick := opts.Tick
	if tick <= 0 {
		tick = max(cues.QuietTime/4, time.Millisecond)
	}
	s := &Scanner{
		ex:      patterns.New(patterns.Options{Namespaces: opts.Namespaces, Mode: patterns.Screen, LineBreaksEnd: opts.Cues.LineBreaksEnd}),
		cues:    cues,
		now:     now,
		tick:    tick,
		kick:    mailbox.NewSignal(),
		floodAt: floodRate,
		subs:    map[int]func(Event){},
	}
	s.scr = screen.NewWithOptions(screen.Options{Cols: opts.Cols, Rows: opts.Rows, OnScrollOff: s.onScrollOff, OnOSC: s.onOSC, OnAltScreen: s.onAltScreen})
	s.cols, s.nrows = s.scr.Size()
	s.rows = make([]rowState, s.nrows)
	t := now()
	s.lastChange, s.lastContent, s.lastEval, s.lastWrite = t, t, t, t
	return s
}

// Write feeds terminal output to the scanner; it never fails. Commands and
// state changes that become final go to the subscribers before it returns.
func (s *Scanner) Write(p []byte) (int, error) {
	s.mu.Lock()
	n := len(p)
	// In a plain terminal a line is done at its line break: read it now,
	// not at the next tick, so that a command goes out at once.
	lineDone := s.cues.LineBreaksEnd && bytes.IndexByte(p, '\n') >= 0
	now := s.now()
	s.arrived.Store(now.UnixNano())
	changedBefore := s.lastChange
	s.cutStaleString(now)
	s.lastWrite = now
	s.endInjection(s.lastWrite)
	for len(p) > 0 {
		piece := p[:min(len(p), feedPiece)]
		p = p[len(piece):]
		s.feed(piece)
		if s.pending >= forcePass {
			s.evaluate(false)
		}
	}
	s.noteString(now)
	switch {
	case lineDone || s.now().Sub(s.lastEval) >= s.tick:
		s.evaluate(false)
		s.readNow = true
	case s.settled && s.pending == 0 && s.epoch == s.passEpoch && !s.contentChanged && !s.refreshContent():
		// Nothing changed but churn (a spinner's frame, a row drawn again
		// as it was): the pass is cheap and needs no wake-up of its own.
		s.evaluate(false)
		s.readNow = true
	default:
		s.dormant = false
		s.kick.Notify()
	}
	if _, due, _ := s.clockDue(); due {
		s.wake()
	}
	s.moveQuiet(changedBefore)
	s.unlockAndEmit()
	return n, nil
}

// settleTime is how soon after output that was not read Run's clock reads
// the screen: a redraw usually comes in several writes a few milliseconds
// apart, and a state change (a paste shown in the input box, a turn's
// end) should not wait a whole tick. It bounds the passes to one per
// settleTime while output keeps coming.
const settleTime = 10 * time.Millisecond

// settle reads the screen if output came since the last pass.
func (s *Scanner) settle() {
	s.mu.Lock()
	if !s.lastEval.Before(s.lastWrite) {
		s.mu.Unlock()
		return
	}
	s.endInjection(s.now())
	s.evaluate(false)
	s.unlockAndEmit()
}

// Tick re-reads the screen at the current time: rows that have been quiet
// long enough become final and the state may turn idle. Run calls it
// periodically; tests call it after moving their clock.
func (s *Scanner) Tick() {
	s.mu.Lock()
	s.endInjection(s.now())
	s.evaluate(false)
	s.unlockAndEmit()
}

// Flush treats everything on screen as final (the end of a recording or of
// the child): commands still open fire now.
func (s *Scanner) Flush() {
	s.mu.Lock()
	s.evaluate(true)
	s.unlockAndEmit()
}

// Skip records that n bytes of output were dropped before the next Write:
// the screen model is reset (what follows may be drawn against a screen it
// never saw) and the count grows. What follows most likely goes on with a
// line cut by the gap: up to the next line the program starts, it is not
// read as a line start (see markCut).
func (s *Scanner) Skip(n int64) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	s.waitable.Store(false)
	s.skipped.Add(n)
	s.evaluate(false) // read what scrolled off before the gap
	s.scr.Reset()
	s.scr.MarkLine(markCut)
	s.epoch++
	s.resetRows()
	s.events = append(s.events, Event{Kind: EventSkipped, Time: s.now(), Skipped: n})
	s.unlockAndEmit()
}

// Skipped returns the total bytes dropped so far. Safe to call any time.
func (s *Scanner) Skipped() int64 { return s.skipped.Load() }

// Resize tells the scanner the child's terminal changed size.
func (s *Scanner) Resize(cols, rows int) {
	s.mu.Lock()
	defer s.unlockAndEmit()
	s.evaluate(false) // read what is final before the program redraws
	oldCols, oldRows := s.cols, s.nrows
	s.lastWrite = s.now()
	s.scr.Resize(cols, rows)
	if x, _ := s.scr.Cursor(); x > 0 && s.colsChanged(oldCols) {
		// The line being written was cut or is split where the old width
		// split it: the rest the program writes does not read on from
		// what the row shows.
		s.scr.MarkLine(markCut)
	}
	s.epoch++
	s.cols, s.nrows = s.scr.Size()
	s.rows = make([]rowState, s.nrows)
	s.resetRows()
	if s.cols == oldCols && s.nrows == oldRows {
		return
	}
	// The terminal cut rows wider than the new width and left soft-wrapped
	// rows split where the old width split them: such a row reads wrong
	// (a body cut mid-sentence, a space inside a word) until the program
	// draws it again, so no command on it fires before then.
	// Such rows are known by their text, which scrolling moves about.
	now := s.lastWrite
	s.staleText = map[string]bool{}
	for y, l := range s.scr.Lines() {
		stale := l.Text != "" && (l.Wrapped || runewidth.StringWidth(l.Text) >= s.cols)
		if stale {
			s.staleText[l.Text] = true
		}
		s.rows[y] = rowState{
			text: l.Text, wrapped: l.Wrapped, code: s.isCode(l), faint: faintAfterFirst(l),
			busy: s.hasBusyText(l.Text), prompt: s.isPromptRow(l.Text), dialog: s.hasDialogText(l.Text),
			at:      mayMention(l.Text),
			version: l.Version, changed: now, stale: stale, mark: l.Mark,
		}
	}
	s.lastVersion = s.scr.Version()
}

// colsChanged reports whether the screen is no longer old columns wide.
func (s *Scanner) colsChanged(old int) bool {
	c, _ := s.scr.Size()
	return c != old
}

// maxInjected bounds the injected texts remembered (typed, and echoed).
const maxInjected = 64

// MarkInjected tells the scanner what the wrapper typed into the child:
// rows showing that text (the input box, the echoed prompt) never fire.
// BeginInjection does this too, and marks the rows by position.
func (s *Scanner) MarkInjected(text string) {
	t := collapse(text)
	if t == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waitable.Store(false)
	// A shell's lines are typed each with its Enter (CR), a model CLI's
	// pasted with LF.
	s.rememberInjected(t, strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == '\r' }))
}

// rememberInjected adds a collapsed text to those that never fire, and
// its lines to the index of whole lines (injectedLine).
func (s *Scanner) rememberInjected(t string, lines []string) {
	var keys []string
	for _, l := range lines {
		s.typedCmds.add(l)
		if k := injectedCore(l); len(k) >= minInjected {
			keys = append(keys, k)
		}
	}
	s.injected = append(s.injected, injectedText{text: t, lines: keys})
	if s.injLines == nil {
		s.injLines = map[string]int{}
	}
	for _, k := range keys {
		s.injLines[k]++
	}
	if n := len(s.injected) - maxInjected; n > 0 {
		for _, old := range s.injected[:n] {
			for _, k := range old.lines {
				if s.injLines[k]--; s.injLines[k] <= 0 {
					delete(s.injLines, k)
				}
			}
		}
		s.injected = append(s.injected[:0], s.injected[n:]...)
	}
}

// injectedText is one text relay typed (or the agent echoed), collapsed,
// with the cores of its lines (the keys it holds in Scanner.injLines).
type injectedText struct {
	text  string
	lines []string
}

// minInjected is the shortest row core matched against typed text: a
// shorter one (a word, a number) turns up anywhere.
const minInjected = 6

// State returns the latest state.
func (s *Scanner) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Text returns the screen as `tmux capture-pane -p` would print it.
func (s *Scanner) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scr.Text()
}

// feed writes one piece to the screen model.
func (s *Scanner) feed(p []byte) {
	if sb, ok := s.clearAcross(p); ok {
		s.cleared(sb)
	}
	for {
		i, scrollback := clearAt(p)
		if i < 0 {
			break
		}
		s.scr.Write(p[:i])
		s.cleared(scrollback)
		s.scr.Write(p[i : i+4])
		p = p[i+4:]
	}
	s.scr.Write(p)
}

// cleared handles ESC[2J or ESC[3J, just before the screen sees it: the
// program clears the screen (or the scrollback), usually to draw it all
// again. Read what is there first; from here on, copies of what fired may
// turn up anywhere (a new epoch).
func (s *Scanner) cleared(scrollback bool) {
	if s.pending > 0 || s.now().Sub(s.lastEval) >= s.tick {
		// Rows changed since the last pass cannot be final yet, so only
		// unread scrolled-off rows or a quiet spell need a pass.
		s.evaluate(false)
	}
	s.epoch++
	if scrollback {
		// What scrolled off was read already; forget it so that the
		// redrawn copies are matched to what fired, not taken for new
		// lines beside the old.
		s.hist = s.hist[:0]
		s.viewFrom = s.scrolled
	}
}

// clearAt returns where the first ESC[2J or ESC[3J in p starts, and
// whether it is ESC[3J (the scrollback), or -1.
func clearAt(p []byte) (int, bool) {
	for off := 0; ; {
		k := bytes.IndexByte(p[off:], 'J')
		if k < 0 {
			return -1, false
		}
		j := off + k
		if j >= 3 && p[j-3] == 0x1b && p[j-2] == '[' && (p[j-1] == '2' || p[j-1] == '3') {
			return j - 3, p[j-1] == '3'
		}
		off = j + 1
	}
}

// clearAcross reports an ESC[2J or ESC[3J split between the previous piece
// and p (and whether it is ESC[3J), and keeps p's last bytes for the next.
func (s *Scanner) clearAcross(p []byte) (scrollback, found bool) {
	if n := len(s.tail); n > 0 && len(p) > 0 {
		var buf [6]byte // the tail (3 bytes at most) and p's first 3
		joined := append(append(buf[:0], s.tail...), p[:min(len(p), 3)]...)
		if i, sb := clearAt(joined); i >= 0 && i < n {
			scrollback, found = sb, true
		}
	}
	s.tail = append(s.tail[:0], p[max(0, len(p)-3):]...)
	return scrollback, found
}

// onScrollOff keeps a row that left the screen.
func (s *Scanner) onScrollOff(l screen.Line) {
	s.learnEcho(l.Text, l.Mark)
	s.hist = append(s.hist, histLine{text: l.Text, wrapped: l.Wrapped, code: s.isCode(l), abs: s.scrolled, stale: s.staleText[l.Text], mark: l.Mark})
	s.scrolled++
	s.pending++
	if len(s.hist) > maxHistory {
		drop := len(s.hist) - maxHistory/2
		cut := s.hist[drop-1].wrapped
		s.hist = append(s.hist[:0], s.hist[drop:]...)
		if cut {
			s.hist[0].mark |= markCut // the start of its line is gone
		}
	}
}

// onOSC follows the state a CLI reports in its StateOSC sequence.
func (s *Scanner) onOSC(num int, payload string) {
	if s.cues.StateOSC == 0 || num != s.cues.StateOSC {
		return
	}
	state, ok := strings.CutPrefix(payload, "state=")
	if !ok {
		return
	}
	s.oscState, _, _ = strings.Cut(state, ":")
}

// resetRows forgets what the rows showed: every row counts as just changed.
func (s *Scanner) resetRows() {
	now := s.now()
	blank := rowState{changed: now, busy: s.hasBusyText(""), prompt: s.isPromptRow("")}
	for i := range s.rows {
		s.rows[i] = blank
	}
	s.lastVersion = 0
	s.lastChange, s.lastContent = now, now
	s.settled = false
	s.wake()
}

// Package screen models the terminal screen of a child program from the raw
// bytes it writes, so that text drawn by full-screen TUIs with cursor
// addressing (Claude Code, Codex, Gemini) can be read back as rows.
//
// tmux (3.3a) is the reference: for the same bytes at the same size,
// [Screen.Text] equals `tmux capture-pane -p` and the soft-wrap flags of
// [Line] equal what `capture-pane -pJ` joins. The tests hold golden files
// made with tmux for every recording in ../../testdata/recordings and for
// streams of our own, and compare with a live tmux when one is installed.
// The model follows tmux where terminals differ: the pending-wrap column,
// widths from the C library's wcwidth(3) (code points it rejects are
// dropped), combining marks and joiners, half-overwritten wide characters,
// ICH and IL when little is left to move, UTF-8 left open across escape
// sequences, DEC graphics shown as the ASCII letters sent.
//
// Escape and control sequences are tokenised by the parser of
// github.com/charmbracelet/x/ansi, except the simple ones that arrive whole
// in one write (SGR, cursor moves, erases, ESC 7): those are read straight
// from the buffer and handed to the same handlers with the same parameters
// (fastseq.go; the tests compare both ways on every input). Printable text, UTF-8 (also when split
// across writes) and the contents of OSC, DCS, APC, PM and SOS strings are
// handled here: that is faster (text never goes through the parser) and it
// avoids the x/ansi parser reading the byte 0x9C inside a UTF-8 title as a
// string terminator, which draws titles such as "✳ Claude Code" on screen.
// Here the model leaves tmux on purpose: CAN and SUB end a DCS too, and a
// string is cut off after [MaxString] bytes (or by [Screen.CutString]), so
// that no string left open can hide the rest of the output.
//
// Scrollback: rows leaving the top of the main screen while the scroll
// region is the whole screen go to [Options.OnScrollOff]. tmux also keeps
// rows scrolled out of a partial region and the screen cleared by ED 2 in
// its history; those are not reported.
//
// A Screen is not safe for concurrent use: one goroutine writes and reads it.
package screen

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Options configures a Screen. The zero value means an 80x24 screen without
// callbacks.
type Options struct {
	// Cols and Rows are the screen size; values below 1 mean 80 and 24.
	Cols, Rows int
	// OnScrollOff receives each row that scrolls off the top of the main
	// (not alternate) screen while the scroll region is the whole screen:
	// the scrollback. Rows pushed out when the screen shrinks are reported
	// too. Clearing the screen (ED 2) is not scrolling and reports nothing.
	OnScrollOff func(Line)
	// OnTitle receives the window title set by OSC 0 or OSC 2.
	OnTitle func(string)
	// OnOSC receives every OSC string other than 0, 1 (icon name) and 2:
	// its number (-1 when it has none) and the payload after the first ';'.
	// Codex reports its state this way (OSC 7501).
	OnOSC func(num int, payload string)
	// OnAltScreen is called when the program switches to the alternate
	// screen (true) or back (false), once the cursor is where the switch
	// leaves it. It may call the Screen's mark methods (MarkLine).
	OnAltScreen func(alt bool)
}

// withDefaults returns o with its zero fields filled in.
func (o Options) withDefaults() Options {
	if o.Cols < 1 {
		o.Cols = 80
	}
	if o.Rows < 1 {
		o.Rows = 24
	}
	return o
}

// maxDim bounds the screen size so that a bad size cannot exhaust memory.
const maxDim = 4096

// Input states of [Screen.Write], beside those inside the x/ansi parser.
const (
	stGround  = iota // printable text and C0 controls
	stSeq            // an escape or CSI sequence, fed to the x/ansi parser
	stOSC            // OSC string, ends at BEL or ESC
	stAPC            // APC or ESC k string, ends at ESC
	stConsume        // SOS or PM string, ends at ESC
	stDCSHead        // DCS parameters, up to the final byte
	stDCSBody        // DCS data, ends at ESC \
	stDCSEsc         // ESC seen inside DCS data
)

// maxOSCData bounds an OSC payload; the rest of a longer one is dropped.
const maxOSCData = 4096

// Screen is a model of a terminal screen. Create one with [New] or
// [NewWithOptions] and feed it with [Screen.Write].
type Screen struct {
	opts       Options
	cols, rows int

	main, alt *buffer
	cur       *buffer // main or alt

	cx, cy         int // cursor; cx == cols is the pending-wrap position
	rupper, rlower int // scroll region, inclusive
	pen            cell
	tabs           []bool

	autowrap, origin, insert bool
	cursorVisible            bool
	bracketedPaste, sync     bool

	saved    savedCursor // DECSC / CSI s
	altSaved savedCursor // ?1049

	title     string
	titles    []string // the last titles set (recentTitle)
	titleNext int      // the next of titles to replace
	version   uint64

	// Marks (see Mark): printMark goes on every row printed on; cutMark
	// on cutRow, the row MarkLine follows, and the rows it wraps onto.
	marking    bool // printMark != 0 || cutRow != nil: the print path checks
	printMark  Mark
	cutMark    Mark
	cutRow     *row
	clusters   []string        // combining sequences, referenced from cells
	scratch    []byte          // reused to build lines
	spans      []Span          // reused to build lines
	slab       []Span          // where built lines' spans are kept (keepSpans)
	textArena  strings.Builder // where built lines' text is kept (keepText)
	rowScratch []*row          // reused to move rows

	// input state
	state  int
	parser *ansi.Parser
	ubuf   [4]byte // pending UTF-8 bytes
	uhave  int
	uneed  int
	ubad   bool
	last   rune // last printed ASCII character for REP, -1 if none
	zwj    bool // a zero width joiner waits to join the next character
	seqNum int  // value of the CSI parameter being read
	seqCnt int  // number of CSI parameters seen
	seqBad bool // the sequence has a parameter tmux rejects
	osc    []byte
	strLen int    // bytes of the open string so far (MaxString)
	strSeq uint64 // strings started so far (OpenString)

	// fastParams holds the parameters of the sequence fastSeq reads;
	// noFast turns the fast paths off, fastSeq and the runs of narrow
	// characters in utf8Bytes (the tests compare both ways).
	fastParams [maxParams]ansi.Param
	noFast     bool
}

// savedCursor is the state saved by DECSC and ?1049. Character sets are not
// tracked: tmux's capture shows DEC graphics as the ASCII letters sent.
type savedCursor struct {
	set    bool
	cx, cy int
	pen    cell
	origin bool
}

// New returns a blank cols x rows screen with default modes.
func New(cols, rows int) *Screen {
	return NewWithOptions(Options{Cols: cols, Rows: rows})
}

// NewWithOptions returns a blank screen configured by opts.
func NewWithOptions(opts Options) *Screen {
	opts = opts.withDefaults()
	s := &Screen{opts: opts, osc: make([]byte, 0, 256)}
	s.parser = ansi.NewParser()
	s.parser.SetDataSize(0) // strings never reach it; keep it small
	s.parser.SetHandler(ansi.Handler{
		Execute:   s.execute,
		HandleCsi: s.handleCSI,
		HandleEsc: s.handleESC,
	})
	s.cols, s.rows = clampDim(opts.Cols), clampDim(opts.Rows)
	s.reset()
	return s
}

func clampDim(n int) int {
	return min(max(n, 1), maxDim)
}

// reset puts the screen back to its initial state, keeping size, callbacks
// and the version counter (which must only grow).
func (s *Screen) reset() {
	s.main = newBuffer(s.cols, s.rows)
	s.alt = nil
	s.cur = s.main
	s.cutRow = nil
	s.marking = s.printMark != 0
	s.cx, s.cy = 0, 0
	s.rupper, s.rlower = 0, s.rows-1
	s.pen = cell{}
	s.resetTabs()
	s.autowrap, s.origin, s.insert = true, false, false
	s.cursorVisible = true
	s.bracketedPaste, s.sync = false, false
	s.saved, s.altSaved = savedCursor{}, savedCursor{}
	s.title = ""
	s.clusters = s.clusters[:0]
	s.state = stGround
	s.parser.Reset()
	s.uhave, s.uneed, s.ubad = 0, 0, false
	s.last = -1
	s.touchAll()
}

func (s *Screen) resetTabs() {
	s.tabs = make([]bool, s.cols)
	for x := 8; x < s.cols; x += 8 {
		s.tabs[x] = true
	}
}

// Reset returns the screen to a blank state with default modes, keeping its
// size and callbacks. The scanner calls it after skipping bytes. Versions
// keep increasing across a reset.
func (s *Screen) Reset() { s.reset() }

// Size returns the screen size.
func (s *Screen) Size() (cols, rows int) { return s.cols, s.rows }

// Cursor returns the 0-based cursor position. After a character was written
// in the last column the column is cols-1 until the next character wraps.
func (s *Screen) Cursor() (col, row int) { return min(s.cx, s.cols-1), s.cy }

// CursorVisible reports whether the program shows the cursor (?25).
func (s *Screen) CursorVisible() bool { return s.cursorVisible }

// AltScreen reports whether the alternate screen is active.
func (s *Screen) AltScreen() bool { return s.cur == s.alt }

// BracketedPaste reports whether the program enabled bracketed paste (?2004).
func (s *Screen) BracketedPaste() bool { return s.bracketedPaste }

// SyncOutput reports whether a synchronized update (?2026) is open.
func (s *Screen) SyncOutput() bool { return s.sync }

// Title returns the last window title set with OSC 0 or OSC 2.
func (s *Screen) Title() string { return s.title }

// Version increases on every change to any cell of the visible screen
// (writes that leave a cell as it was do not count; cursor moves do not).
func (s *Screen) Version() uint64 { return s.version }

// touch records a change to row y of the current buffer: its cells, its
// soft-wrap flag or its marks. The row is no longer plain (see row.plain).
func (s *Screen) touch(y int) {
	s.touchKeep(y)
	s.cur.rows[y].plain = false
}

// touchKeep records a change to row y that keeps a plain row's text valid:
// ASCII printed the plain way, its soft-wrap flag, its marks.
func (s *Screen) touchKeep(y int) {
	s.version++
	r := s.cur.rows[y]
	r.version = s.version
	r.dirty = true
}

// moved records that rows top..bot (inclusive) of the current buffer now
// hold other rows: their versions change, but a row's cells went with it,
// so the text built from them stays valid (rows blanked on the way are
// marked dirty by blankRow).
func (s *Screen) moved(top, bot int) {
	s.version++
	if top == 0 && bot == s.rows-1 {
		// The whole screen (a line feed at the bottom of a scrolling
		// terminal): one stamp for all rows, not a store in each.
		s.cur.moved = s.version
		return
	}
	for y := top; y <= bot; y++ {
		s.cur.rows[y].version = s.version
	}
}

// touchAll records a change to every row of the current buffer.
func (s *Screen) touchAll() {
	s.version++
	for _, r := range s.cur.rows {
		r.version = s.version
		r.dirty = true
	}
}

// Resize changes the screen size. Rows keep their contents, cut or padded
// on the right (no reflow). When rows shrink, rows below the cursor are
// dropped first and then rows leave at the top (reported to OnScrollOff on
// the main screen), as tmux does; new rows are blank (tmux would bring
// scrollback back). The scroll region is reset to the whole screen.
func (s *Screen) Resize(cols, rows int) {
	cols, rows = clampDim(cols), clampDim(rows)
	if cols == s.cols && rows == s.rows {
		return
	}
	s.cy = s.main.resize(s, cols, rows, s.cy, s.cur == s.main)
	if s.alt != nil {
		cy := s.alt.resize(s, cols, rows, s.cy, s.cur == s.alt)
		if s.cur == s.alt {
			s.cy = cy
		}
	}
	s.cols, s.rows = cols, rows
	s.cx = min(s.cx, cols-1)
	s.cy = min(s.cy, rows-1)
	s.rupper, s.rlower = 0, rows-1
	old := s.tabs
	s.resetTabs()
	copy(s.tabs, old)
	s.touchAll()
}

package wrapper

import "bytes"

// lineTracker follows, from the human's keys alone, whether the human has
// an unfinished line in the child: text typed since the last submit. relay
// is the single writer of the child's stdin, so it sees every key; it
// cannot see the child's screen, so the rules are conservative (a line
// may be taken for unfinished when it is empty, never the other way):
//
//   - Enter (CR or LF) and Ctrl-C end the line: it is empty.
//   - A printable character (ASCII or UTF-8) makes it unfinished.
//   - While the line is exact (nothing but printable characters and the
//     editing keys below since it was last empty), relay counts its
//     characters and the cursor's place among them, as readline edits:
//     Backspace (DEL, 0x7f) removes the character left of the cursor,
//     Delete (ESC [3~) the one under it; Left and Right (ESC [D, ESC [C,
//     their ESC O forms, Ctrl-B, Ctrl-F), Home and End (ESC [H, ESC [F,
//     ESC [1~, ESC [4~, their ESC O forms, Ctrl-A, Ctrl-E) move the
//     cursor; Ctrl-U removes what is left of the cursor and Ctrl-K what is
//     right of it. The line is empty again when no character is left: Ctrl-U
//     with text right of the cursor leaves it unfinished. Right and End at
//     the end of the line make it inexact (fish and zsh-autosuggestions
//     accept a suggested command with them). Moves in a line
//     that holds a character other than ASCII make it inexact (the width
//     and the joining of such characters are the program's to decide).
//   - Any other key that may put text in the line, or move in it, makes it
//     unfinished and inexact: Tab (completion), a human bracketed paste
//     (whatever it holds: a line break in a paste is not a submit), Up and
//     Down (history), function keys and every other escape sequence,
//     Alt-key combinations, a mouse report, and every other control key
//     (Ctrl-Y yanks, Ctrl-P recalls, Ctrl-W erases a word, Ctrl-H is not
//     always a backspace). Once inexact, only Enter or Ctrl-C empty it:
//     Ctrl-U clears only left of a cursor relay cannot place any more.
//   - Escape alone (the last byte of a read: a terminal writes a whole
//     sequence at once) makes the line inexact but not unfinished: it
//     changes a mode (vi command mode, or Claude Code's interrupt), it types
//     nothing. A key after it within the same read makes an Alt-key.
//   - What the human's terminal sends on its own, in reply to the child's
//     queries, is not a key and changes nothing: focus in and out, cursor
//     position and device attribute reports, mode reports, and OSC, DCS and
//     APC strings (colour replies).
type lineTracker struct {
	unfinished bool
	inexact    bool // something other than plain typing since the line was last empty
	count      int  // characters in the line, while exact
	cursor     int  // the cursor's place among them (0: before the first), while exact
	wide       bool // the line holds a character other than ASCII
	state      int
	params     []byte // CSI parameter and intermediate bytes, bounded
	overflow   bool   // params ran past maxKeyParams
	paste      int    // how many bytes of pasteEndSeq matched, inside a paste
	// breaks counts, in the last feed up to its first Enter that submitted
	// text, the line breaks inside a paste and that Enter: the line feeds
	// the child's echo of the submitted line will hold. What a later line
	// of the same feed echoes comes after the first one's output, which
	// relay cannot count.
	breaks    int
	submitted bool // the last feed submitted text
}

const (
	keyGround = iota
	keyEsc    // after ESC
	keyCSI    // after ESC [
	keySS3    // after ESC O
	keyString // inside OSC, DCS, APC, PM or SOS
	keyStrEsc // after ESC inside a string
	keyPaste  // inside a human bracketed paste
)

const maxKeyParams = 32

var pasteEndSeq = []byte("\x1b[201~")

// feed reads a chunk of the human's keys (one read of the keyboard) and
// reports whether the line's unfinished state changed.
func (t *lineTracker) feed(p []byte) (changed bool) {
	before := t.unfinished
	t.breaks, t.submitted = 0, false
	for i := 0; i < len(p); i++ {
		b := p[i]
		switch t.state {
		case keyGround:
			t.ground(b)
		case keyEsc:
			t.esc(b)
		case keyCSI:
			t.csi(b)
		case keySS3:
			t.state = keyGround
			if b < 0x20 {
				t.taint()
				t.ground(b)
				continue
			}
			t.ss3(b) // F1-F4, or arrows in application mode
		case keyString:
			switch {
			case b == 0x07:
				t.state = keyGround
			case b == 0x1b:
				t.state = keyStrEsc
			case b < 0x20:
				// No reply holds a control character: these were keys
				// (Alt-] and what followed).
				t.state = keyGround
				t.taint()
				t.ground(b)
			}
		case keyStrEsc:
			t.state = keyGround
			if b != '\\' {
				t.taint()
				t.esc(b)
			}
		case keyPaste:
			t.inPaste(b)
		}
	}
	// The end of a read: what is still open was keys, not a reply (a
	// terminal writes each reply and each key's sequence at once).
	switch t.state {
	case keyEsc:
		t.inexact = true // Escape alone
		t.state = keyGround
	case keySS3:
		t.taint() // Alt-O
		t.state = keyGround
	case keyCSI, keyString, keyStrEsc:
		t.taint()
	}
	return t.unfinished != before
}

// clear empties the line.
func (t *lineTracker) clear() {
	t.unfinished, t.inexact, t.count, t.cursor, t.wide = false, false, 0, 0, false
}

// taint marks the line unfinished with text relay cannot count.
func (t *lineTracker) taint() {
	t.unfinished, t.inexact = true, true
}

func (t *lineTracker) ground(b byte) {
	switch {
	case b == '\r' || b == '\n' || b == 0x03:
		if t.unfinished && (b == '\r' || b == '\n') && !t.submitted {
			t.breaks++
			t.submitted = true
		}
		t.clear()
	case b == 0x1b:
		t.state = keyEsc
	case b == 0x7f:
		t.edit(editBackspace)
	case b == 0x15:
		t.edit(editKillLeft)
	case b == 0x0b:
		t.edit(editKillRight)
	case b == 0x01:
		t.edit(editHome)
	case b == 0x05:
		t.edit(editEnd)
	case b == 0x02:
		t.edit(editLeft)
	case b == 0x06:
		t.edit(editRight)
	case b < 0x20:
		t.taint() // Tab and every other control key
	default:
		t.unfinished = true
		if t.inexact || (b >= 0x80 && b < 0xc0) { // a UTF-8 continuation byte
			return
		}
		if b >= 0x80 {
			t.wide = true
		}
		t.count++
		t.cursor++
	}
}

// An edit is a key that moves the cursor or removes text (see lineTracker).
type edit int

const (
	editBackspace edit = iota
	editDelete
	editKillLeft
	editKillRight
	editHome
	editEnd
	editLeft
	editRight
)

// edit applies e to an exact line, and keeps an inexact one unfinished.
func (t *lineTracker) edit(e edit) {
	if t.inexact {
		return // Ctrl-U and the others leave it unfinished: text may be left
	}
	if (e == editRight || e == editEnd) && t.cursor == t.count {
		// At the end of the line, Right and End accept a suggestion in
		// fish, zsh-autosuggestions and some TUIs: text relay did not see.
		t.taint()
		return
	}
	if t.wide && e != editBackspace && e != editKillLeft {
		// Where the cursor lands among wide or joined characters is
		// the program's to say.
		if t.count > 0 {
			t.taint()
		}
		return
	}
	switch e {
	case editBackspace:
		if t.cursor > 0 {
			t.cursor--
			t.count--
		}
	case editDelete:
		if t.cursor < t.count {
			t.count--
		}
	case editKillLeft:
		t.count -= t.cursor
		t.cursor = 0
	case editKillRight:
		t.count = t.cursor
	case editHome:
		t.cursor = 0
	case editEnd:
		t.cursor = t.count
	case editLeft:
		t.cursor = max(t.cursor-1, 0)
	case editRight:
		t.cursor = min(t.cursor+1, t.count)
	}
	if t.count == 0 {
		t.clear()
	}
}

// ss3 classifies ESC O final: arrows and Home/End in application cursor
// mode move the cursor; Up, Down and F1-F4 taint.
func (t *lineTracker) ss3(final byte) {
	switch final {
	case 'C':
		t.edit(editRight)
	case 'D':
		t.edit(editLeft)
	case 'H':
		t.edit(editHome)
	case 'F':
		t.edit(editEnd)
	default:
		t.taint()
	}
}

func (t *lineTracker) esc(b byte) {
	switch b {
	case '[':
		t.state, t.params, t.overflow = keyCSI, t.params[:0], false
	case 'O':
		t.state = keySS3
	case ']', 'P', '_', '^', 'X':
		t.state = keyString
	case 0x1b:
		// Escape twice: the first one alone.
		t.inexact = true
	default:
		// An Alt-key, Alt-Enter included (a newline in a TUI's box, not a
		// submit).
		t.state = keyGround
		t.taint()
	}
}

func (t *lineTracker) csi(b byte) {
	switch {
	case b >= 0x40 && b <= 0x7e:
		t.state = keyGround
		t.csiDone(b)
	case b >= 0x20 && b <= 0x3f:
		if len(t.params) < maxKeyParams {
			t.params = append(t.params, b)
		} else {
			t.overflow = true
		}
	default:
		// Not a sequence after all: keys.
		t.state = keyGround
		t.taint()
		t.ground(b)
	}
}

// csiDone classifies a complete CSI sequence: the start of a human paste,
// one of the terminal's own replies (no change), or a key.
func (t *lineTracker) csiDone(final byte) {
	if t.overflow {
		t.taint()
		return
	}
	if final == '~' && string(t.params) == "200" {
		t.taint()
		t.state, t.paste = keyPaste, 0
		return
	}
	if terminalReply(t.params, final) {
		return
	}
	if e, ok := editKey(t.params, final); ok {
		t.edit(e)
		return
	}
	t.taint()
}

// editKey reports whether CSI params final is an unmodified key that moves
// the cursor within the line or deletes under it.
func editKey(params []byte, final byte) (edit, bool) {
	p := string(params)
	switch {
	case p == "" && final == 'C':
		return editRight, true
	case p == "" && final == 'D':
		return editLeft, true
	case p == "" && final == 'H', final == '~' && (p == "1" || p == "7"):
		return editHome, true
	case p == "" && final == 'F', final == '~' && (p == "4" || p == "8"):
		return editEnd, true
	case final == '~' && p == "3":
		return editDelete, true
	}
	return 0, false
}

// terminalReply reports whether CSI params final is something a terminal
// sends on its own (to the child's queries or modes), not a key.
func terminalReply(params []byte, final byte) bool {
	p := string(params)
	switch final {
	case 'I', 'O':
		return p == "" // focus in, focus out
	case 'R':
		// Cursor position report: row;col, or ?row;col;page.
		return p != "" && onlyDigitsAnd(bytes.TrimPrefix(params, []byte("?")), ';') && bytes.IndexByte(params, ';') >= 0
	case 'c':
		return len(p) > 0 && (p[0] == '?' || p[0] == '>') // device attributes
	case 'n':
		return p == "0" || p == "3" // device status
	case 'y':
		return len(p) > 0 && p[len(p)-1] == '$' // mode report (DECRPM)
	case 'u':
		return len(p) > 0 && p[0] == '?' // keyboard protocol flags
	case 't':
		return len(p) > 0 && onlyDigitsAnd(params, ';') // window size reports
	}
	return false
}

func onlyDigitsAnd(p []byte, sep byte) bool {
	for _, c := range p {
		if (c < '0' || c > '9') && c != sep {
			return false
		}
	}
	return true
}

// inPaste swallows a human paste up to its end marker; nothing in it ends
// the line.
func (t *lineTracker) inPaste(b byte) {
	if b == pasteEndSeq[t.paste] {
		t.paste++
		if t.paste == len(pasteEndSeq) {
			t.state, t.paste = keyGround, 0
		}
		return
	}
	t.paste = 0
	if b == pasteEndSeq[0] {
		t.paste = 1
	}
	if (b == '\r' || b == '\n') && !t.submitted {
		t.breaks++
	}
}

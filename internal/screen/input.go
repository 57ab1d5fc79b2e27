package screen

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi/parser"
)

// Write feeds the program's output to the screen. It consumes all of p and
// never fails; sequences and UTF-8 characters may be split across calls.
func (s *Screen) Write(p []byte) (int, error) {
	i := 0
	for i < len(p) {
		switch s.state {
		case stGround:
			i = s.ground(p, i)
		case stSeq:
			b := p[i]
			i++
			s.seqByte(b)
		default:
			i = s.stringBytes(p, i)
		}
	}
	return len(p), nil
}

// ground handles text and C0 controls from p[i:] until an escape sequence
// starts or p ends, and returns the index of the next byte to handle.
func (s *Screen) ground(p []byte, i int) int {
	for i < len(p) {
		b := p[i]
		if b < 0x7f && b != 0x1b {
			// Text and controls abandon an open UTF-8 character;
			// escape sequences and DEL do not (as in tmux).
			s.uneed = 0
		}
		switch {
		case b >= 0x20 && b < 0x7f:
			j := printableEnd(p, i+1)
			s.printASCII(p[i:j])
			i = j
		case b >= 0x80:
			i = s.utf8Bytes(p, i)
			continue
		case b == 0x1b:
			if n := s.fastSeq(p, i); n > 0 {
				i += n
				continue
			}
			s.startSeq()
			return i + 1
		case b == 0x7f:
			i++
		default:
			s.execute(b)
			i++
		}
	}
	return i
}

// printableEnd returns the index of the first byte of p from i on that is
// not printable ASCII (0x20-0x7e), or len(p). It tests eight bytes at a
// time: a text run is most of a plain terminal's output.
func printableEnd(p []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(p); i += 8 {
		x := binary.LittleEndian.Uint64(p[i:])
		// A byte below 0x20 borrows (x - 0x20 each) where x had no high
		// bit; a byte of 0x7f and up has its high bit set after adding 1
		// (or before). Either flags the word, which is then read byte by
		// byte; a word without a flag is all printable.
		if ((x-0x20*ones)&^x|(x+ones)|x)&highs != 0 {
			break
		}
	}
	for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
		i++
	}
	return i
}

// utf8Bytes decodes UTF-8 from p[i:] the way tmux does: a lead byte opens a
// character of the size it announces, the following bytes of 0x80 and up
// fill it, and an invalid result is dropped. Bytes below 0x80 in between are
// handled as usual and leave the character open.
func (s *Screen) utf8Bytes(p []byte, i int) int {
	if s.uneed == 0 {
		// Fast path: a whole valid character in p.
		if r, n := decodeRune(p[i:]); n > 1 {
			if s.autowrap && !s.insert && !s.zwj && !s.noFast {
				// A run of narrow characters (a TUI's frames and rules).
				for n > 1 && runeWidth(r) == 1 {
					s.printNarrow(r)
					if i += n; i >= len(p) || p[i] < 0x80 {
						return i
					}
					r, n = decodeRune(p[i:])
				}
				if n <= 1 {
					return i // not a whole character: the slow way
				}
			}
			s.printRune(r)
			return i + n
		}
		b := p[i]
		switch {
		case b >= 0xc2 && b <= 0xdf:
			s.uneed = 2
		case b >= 0xe0 && b <= 0xef:
			s.uneed = 3
		case b >= 0xf0 && b <= 0xf4:
			s.uneed = 4
		default:
			return i + 1 // not a lead byte: dropped
		}
		s.ubuf[0], s.uhave, s.ubad = b, 1, false
		i++
	}
	for i < len(p) && p[i] >= 0x80 && s.uhave < s.uneed {
		b := p[i]
		if b&0xc0 != 0x80 {
			s.ubad = true
		}
		s.ubuf[s.uhave] = b
		s.uhave++
		i++
	}
	if s.uhave == s.uneed {
		n := s.uneed
		s.uneed, s.uhave = 0, 0
		if !s.ubad {
			if r, m := utf8.DecodeRune(s.ubuf[:n]); m == n {
				s.printRune(r)
			}
		}
	}
	return i
}

// decodeRune is utf8.DecodeRune with the two- and three-byte characters
// of box drawing, blocks and most scripts decoded inline (TUIs draw their
// frames with them); the rest goes to utf8.DecodeRune.
func decodeRune(p []byte) (rune, int) {
	if len(p) >= 3 {
		b0, b1, b2 := p[0], p[1], p[2]
		switch {
		case b0 >= 0xc2 && b0 <= 0xdf && b1&0xc0 == 0x80:
			return rune(b0&0x1f)<<6 | rune(b1&0x3f), 2
		case (b0 >= 0xe1 && b0 <= 0xec || b0 == 0xee || b0 == 0xef) && b1&0xc0 == 0x80 && b2&0xc0 == 0x80:
			// E0 and ED have narrower second bytes (overlong forms and
			// surrogates): utf8.DecodeRune checks those.
			return rune(b0&0x0f)<<12 | rune(b1&0x3f)<<6 | rune(b2&0x3f), 3
		}
	}
	return utf8.DecodeRune(p)
}

// seqByte feeds one byte of an escape or CSI sequence to the x/ansi parser,
// taking over the strings it would otherwise collect.
func (s *Screen) seqByte(b byte) {
	if b >= 0x80 {
		return // tmux ignores 8-bit bytes inside sequences
	}
	st := s.parser.State()
	if st == parser.EscapeState {
		switch b {
		case ']':
			s.startString(stOSC)
			return
		case 'P':
			s.startString(stDCSHead)
			return
		case 'X', '^':
			s.startString(stConsume)
			return
		case '_', 'k':
			s.startString(stAPC)
			return
		}
	}
	switch {
	case b >= '0' && b <= '9':
		if s.seqNum = s.seqNum*10 + int(b-'0'); s.seqNum > math.MaxInt32 {
			s.seqBad = true
			s.seqNum = 0
		}
	case b == ';':
		s.seqNum = 0
		if s.seqCnt++; s.seqCnt >= maxParams {
			s.seqBad = true
		}
	case b == 0x1b:
		s.seqNum, s.seqCnt, s.seqBad = 0, 0, false
	}
	s.parser.Advance(b)
	if s.parser.State() == parser.GroundState {
		s.toGround()
	}
}

// maxParams is tmux's limit on the parameters of a sequence; it ignores
// sequences with more.
const maxParams = 24

// startSeq starts an escape sequence at an ESC byte.
func (s *Screen) startSeq() {
	s.state = stSeq
	s.seqNum, s.seqCnt, s.seqBad = 0, 0, false
	s.parser.Reset()
	s.parser.Advance(0x1b)
}

// toGround returns to text after a sequence. A UTF-8 character left open
// before the sequence stays open, as in tmux.
func (s *Screen) toGround() {
	s.state = stGround
}

func (s *Screen) startString(st int) {
	s.parser.Reset()
	s.state = st
	s.osc = s.osc[:0]
	s.strLen = 0
	s.strSeq++
}

// MaxString bounds a terminal string (OSC, DCS, APC, PM, SOS, ESC k): once
// this many bytes of it have arrived without its end, it is cut off and
// what follows is read as text. 1 MiB is tmux's input-buffer-size, the most
// it keeps of a string; a real string (an image, a clipboard copy) fits.
const MaxString = 1 << 20

// OpenString reports whether a terminal string is open (its terminator not
// seen yet) and numbers it: seq grows with every string started, so a
// caller can tell the same open string from a later one.
func (s *Screen) OpenString() (seq uint64, open bool) {
	return s.strSeq, s.state != stGround && s.state != stSeq
}

// CutString ends an open terminal string as if it had been cut off at its
// bound: the string is dropped (an OSC is not reported) and what follows is
// read as text. It does nothing when no string is open. The scanner calls
// it when a string stays open too long (see docs/scanner.md); tmux resets
// its parser the same way after five seconds.
func (s *Screen) CutString() {
	if _, open := s.OpenString(); open {
		s.osc = s.osc[:0]
		s.toGround()
	}
}

// stringBytes consumes the contents of an OSC, DCS, APC, PM or SOS string
// from p[i:] and returns the index of the next byte to handle. Every string
// ends at CAN and SUB (as on a DEC terminal and in xterm; tmux reads them as
// data inside a DCS) and is cut off after MaxString bytes.
func (s *Screen) stringBytes(p []byte, i int) int {
	for i < len(p) {
		if s.strLen >= MaxString {
			s.CutString()
			return i
		}
		s.strLen++
		b := p[i]
		if b == 0x18 || b == 0x1a {
			s.endString()
			s.toGround()
			s.execute(b)
			return i + 1
		}
		switch s.state {
		case stDCSBody:
			if b == 0x1b {
				s.state = stDCSEsc
			}
			i++
			continue
		case stDCSEsc:
			if b == '\\' {
				s.toGround()
				return i + 1
			}
			s.state = stDCSBody
			i++
			continue
		}
		// The other string states end at ESC (and OSC at BEL).
		switch {
		case b == 0x1b:
			s.endString()
			s.startSeq()
			return i + 1
		case b == 0x07 && s.state == stOSC:
			s.endString()
			s.toGround()
			return i + 1
		}
		switch s.state {
		case stOSC:
			if b >= 0x20 {
				if len(s.osc) < maxOSCData {
					s.osc = append(s.osc, b)
				}
			}
		case stDCSHead:
			if b >= 0x40 && b <= 0x7e {
				s.state = stDCSBody
			}
		}
		i++
	}
	return i
}

// endString dispatches a finished OSC string.
func (s *Screen) endString() {
	if s.state != stOSC {
		return
	}
	data := s.osc
	num, j := -1, 0
	for j < len(data) && data[j] >= '0' && data[j] <= '9' && j < 9 {
		if num < 0 {
			num = 0
		}
		num = num*10 + int(data[j]-'0')
		j++
	}
	if j < len(data) && data[j] != ';' {
		num = -1 // not a number after all
		j = 0
	} else if j < len(data) {
		j++
	}
	payload := data[j:]
	switch num {
	case 0, 2:
		if !utf8.Valid(payload) {
			return
		}
		if string(payload) != s.title {
			s.title = s.recentTitle(payload)
		}
		if s.opts.OnTitle != nil {
			s.opts.OnTitle(s.title)
		}
	case 1:
		// icon name: ignored
	default:
		if s.opts.OnOSC != nil {
			s.opts.OnOSC(num, string(payload))
		}
	}
}

// recentTitles is how many titles recentTitle remembers.
const recentTitles = 16

// recentTitle returns title as a string, the same string as last time
// when it is one of the last few titles: TUIs cycle through a handful
// (Claude Code animates a spinner in its title), and a title set many
// times a second should not cost an allocation each time.
func (s *Screen) recentTitle(title []byte) string {
	for _, t := range s.titles {
		if t == string(title) {
			return t
		}
	}
	t := string(title)
	if len(s.titles) < recentTitles {
		s.titles = append(s.titles, t)
	} else {
		s.titles[s.titleNext] = t
		s.titleNext = (s.titleNext + 1) % recentTitles
	}
	return t
}

// execute performs a C0 control.
func (s *Screen) execute(b byte) {
	if b == 0x1b {
		return // ESC ESC: the parser restarts the sequence
	}
	s.uneed = 0
	s.last = -1
	switch b {
	case 0x08: // BS
		if s.cx > 0 {
			s.cx = min(s.cx, s.cols) - 1
		} else if s.cy > 0 && s.cur.rows[s.cy-1].wrapped {
			s.cy--
			s.cx = s.cols - 1
		}
	case 0x09: // HT
		if s.cx >= s.cols-1 {
			return
		}
		for {
			s.cx++
			if s.cx >= s.cols-1 || s.tabs[s.cx] {
				break
			}
		}
	case 0x0a, 0x0b, 0x0c: // LF, VT, FF
		s.linefeed()
	case 0x0d: // CR
		s.cx = 0
	}
}

package screen

import (
	"math"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// The fast path for escape sequences. Most sequences a TUI writes are short
// and simple (SGR, cursor moves, erases, ESC 7 and 8) and arrive whole in
// one write: fastSeq reads such a sequence straight from the buffer and
// calls the same handlers the x/ansi parser would, with the same command
// and parameters, instead of feeding the parser byte by byte (which was a
// quarter of the time on Claude Code's output). Anything else (a sequence
// split across writes, colon sub-parameters, intermediates, C0 controls or
// 8-bit bytes inside, strings, numbers tmux rejects) goes the generic way
// from its ESC, so the result is the same by construction;
// TestFastSeqMatchesGeneric and FuzzFastSeq hold the two paths equal.

// fastESC lists the final bytes of two-byte escape sequences (ESC and one
// byte) that the parser dispatches at once: 0x30-0x7e but the introducers
// of CSI, OSC, DCS, SOS, PM and APC, and ESC k (tmux's title string).
var fastESC = func() (t [128]bool) {
	for b := 0x30; b <= 0x7e; b++ {
		t[b] = true
	}
	for _, b := range "[]PX^_k" {
		t[b] = false
	}
	return t
}()

// fastSeq performs the escape sequence starting at p[i] (an ESC) when it is
// whole in p and simple, and returns its length; 0 means the generic path
// must take it from the ESC.
func (s *Screen) fastSeq(p []byte, i int) int {
	if s.noFast || i+2 >= len(p) {
		return 0
	}
	b := p[i+1]
	if b != '[' {
		if b < 0x80 && fastESC[b] {
			s.handleESC(ansi.Cmd(b))
			return 2
		}
		return 0
	}
	j := i + 2
	cmd := 0
	if c := p[j]; c >= '<' && c <= '?' {
		cmd = int(c) << parser.PrefixShift
		j++
	}
	// The parameters as x/ansi packs them: a missing one is MissingParam,
	// and a sequence without any has none. Up to maxParams-1 semicolons:
	// with more, tmux ignores the sequence (seqBad), the generic path's job.
	ps := s.fastParams[:0]
	v := parser.MissingParam
	for ; j < len(p); j++ {
		c := p[j]
		switch {
		case c >= '0' && c <= '9':
			if v == parser.MissingParam {
				v = 0
			}
			if v = v*10 + int(c-'0'); v >= math.MaxInt32 {
				// A number tmux rejects, or one x/ansi reads as missing.
				return 0
			}
		case c == ';':
			if len(ps) >= maxParams-1 {
				return 0
			}
			ps = append(ps, ansi.Param(v))
			v = parser.MissingParam
		case c >= 0x40 && c <= 0x7e:
			if len(ps) > 0 || v != parser.MissingParam {
				ps = append(ps, ansi.Param(v))
			}
			s.seqBad = false
			s.handleCSI(ansi.Cmd(cmd|int(c)), ps)
			return j + 1 - i
		default:
			return 0
		}
	}
	return 0
}

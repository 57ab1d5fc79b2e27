package scanner

import "time"

// A terminal string (OSC, DCS, APC, PM, SOS) hides everything written until
// its terminator. A program writes a real one whole, in one go; one left
// open (a stray ESC P in random bytes, a program killed in the middle of an
// escape) would hide all later output, and every command with it. The
// screen cuts a string off after screen.MaxString bytes; the scanner also
// cuts one that is still open when output resumes after stringQuiet of
// silence, or that has been open for stringLife (tmux resets its parser
// after five seconds in a string).
const (
	stringQuiet = time.Second
	stringLife  = 5 * time.Second
)

// cutStaleString cuts the open terminal string, if any, when the output
// written at now resumes after a pause or the string has been open too
// long. It runs before the bytes written at now are fed.
func (s *Scanner) cutStaleString(now time.Time) {
	seq, open := s.scr.OpenString()
	if !open || seq != s.strSeq {
		return
	}
	if now.Sub(s.lastWrite) >= stringQuiet || now.Sub(s.strSince) >= stringLife {
		s.scr.CutString()
	}
}

// noteString records when the string open after a Write was first seen.
func (s *Scanner) noteString(now time.Time) {
	if seq, open := s.scr.OpenString(); open && seq != s.strSeq {
		s.strSeq, s.strSince = seq, now
	}
}

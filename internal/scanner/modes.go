package scanner

// BracketedPaste reports whether the child has turned on bracketed paste
// (?2004h), so that typed text can be sent as one paste.
func (s *Scanner) BracketedPaste() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scr.BracketedPaste()
}

// Title returns the window title the child set last (OSC 0 or 2).
func (s *Scanner) Title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scr.Title()
}

// CursorRow returns the text of the cursor's row, left of the cursor and
// from it on (trailing blanks trimmed), and whether the alternate screen
// is active (a full-screen program).
func (s *Scanner) CursorRow() (before, after string, alt bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	before, after = s.scr.CursorRow()
	return before, after, s.scr.AltScreen()
}

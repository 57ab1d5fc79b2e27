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

package scanner

import "time"

// Run's clock re-reads the screen only while a pass can change its answer:
// a command waits to become final, an injection's echo time runs, rows
// changed and the next pass must read them, or the state turns idle once
// the screen has been quiet long enough. Otherwise it sleeps (dormant)
// until output or a change (an injection, a resize) wakes it: an idle
// agent's wrapper costs no wake-ups, and a spinner's redraws (churn, see
// refreshRows) wake it once a quiet time, not every tick.

// nextTick returns when Run's clock should read the screen next, and
// false when it may sleep until woken; quiet says the wait is for the
// screen's quiet time, which each changed row moves later (Write moves
// the alarm then, moveQuiet).
func (s *Scanner) nextTick() (d time.Duration, due, quiet bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, due, quiet = s.clockDue()
	if !due {
		s.dormant = true
	}
	if s.quietWait && due && quiet {
		s.wokeEarly++
	}
	s.quietWait = due && quiet
	return d, due, quiet
}

// clockDue returns when a pass with no new output could change the
// scanner's answer, and false when none can; quiet says it is when the
// screen will have been quiet long enough (from lastChange). Called with
// s.mu held.
func (s *Scanner) clockDue() (d time.Duration, due, quiet bool) {
	if !s.settled || s.contentChanged || s.pending > 0 || s.epoch != s.passEpoch || s.inj.depth > 0 || !s.inj.end.IsZero() {
		return s.tick, true, false
	}
	if s.hasBusyCue() {
		// Busy whatever the time while the cue shows (updateState): a
		// CLI's spinner turning under "esc to interrupt" costs the
		// clock no wake-up (issue 34). The output that takes the cue
		// away wakes it (Write).
		return 0, false, false
	}
	if left := s.quietNeed() - s.now().Sub(s.lastChange); left > 0 {
		// Busy until the screen has been quiet: the state turns idle then.
		return left + time.Millisecond, true, true
	}
	return 0, false, false
}

// moveQuiet moves the clock's quiet alarm to the screen's new quiet time
// when rows changed since before (a spinner's frame) while the clock
// waits for it: the clock then wakes only once output stops, not every
// quiet time while it flows (internal/alarm). Called with s.mu held.
func (s *Scanner) moveQuiet(before time.Time) {
	if !s.quietWait || s.alarm == nil || s.lastChange.Equal(before) {
		return
	}
	if d, due, quiet := s.clockDue(); due && quiet {
		s.alarm.Move(d)
	}
}

// quietNeed is how long the screen must be quiet before the agent counts
// as idle.
func (s *Scanner) quietNeed() time.Duration {
	if !s.quietOnce {
		return max(s.cues.QuietTime, s.cues.StartQuiet)
	}
	return s.cues.QuietTime
}

// wake ends the clock's sleep: something changed that a later pass must
// read. Called with s.mu held.
func (s *Scanner) wake() {
	if !s.dormant {
		return
	}
	s.dormant = false
	s.kick.Notify()
}

// refreshContent re-reads the rows and reports whether a row other than
// churn changed since the last full pass.
func (s *Scanner) refreshContent() bool {
	s.refreshRows()
	return s.contentChanged
}

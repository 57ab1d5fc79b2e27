package scanner

import (
	"bytes"
	"time"
)

// holdLimit bounds MaxWait: output held back longer would delay what a
// human sees the agent do on the dashboard, and the turn's end, by more
// than a glance.
const holdLimit = 150 * time.Millisecond

// CanWait reports whether output p may wait a little before the scanner
// reads it (the wrapper's tap holds it back, so that several frames of a
// spinner cost one pass and one wake-up of the scanner's goroutine, not
// one each: issue 34). It is safe to call from any goroutine.
//
// It says yes only when reading p at once can change nothing anyone acts
// on before MaxWait: the scanner's last pass found nothing but churn (a
// spinner's frame, a row drawn again as it was) while the agent was busy,
// so no text is typed into it meanwhile, and nothing on screen waited to be
// read; p holds no '@' that may start a command (mayMentionBytes: not
// Gemini CLI's "@path/to/file"), and no line feed unless p first moved the
// cursor up (redrawInPlace), so it ends no line (a shell's answer and the
// prompt under it are read at once; a spinner draws in place, and Gemini
// CLI redraws its rows in place, line feeds and all). Anything else that
// changes (the busy cue gone, a dialog drawn) is read when the held bytes
// are, at most MaxWait later while frames come, and twice that when they
// stop.
//
// And p must follow the output before it within two thirds of MaxWait:
// only then do the frames of a steady spinner share a run of held output
// three or more to a run, and the next run begins before the alarm the tap
// set for the one before (at twice MaxWait) fires. Frames further apart
// would go two to a run, each run costing the tap's alarm a system call to
// set it and a wake-up for nothing when it fires, more than the pass it
// saves: Claude Code 2.1.328 draws its spinner every 115-180 ms, and
// holding its frames made the wrapper's CPU go up, not down
// (BenchmarkThinkingCPU, docs/performance-cpu.md).
func (s *Scanner) CanWait(p []byte) bool {
	now := s.now().UnixNano()
	gap := time.Duration(now - s.arrived.Swap(now))
	if 3*gap >= 2*s.MaxWait() || !s.waitable.Load() || mayMentionBytes(p) {
		return false
	}
	nl := bytes.IndexByte(p, '\n')
	return nl < 0 || redrawInPlace(p[:nl])
}

// MaxWait is how long output CanWait let wait may be held back while more
// comes: a third of the profile's quiet time, so that the screen's quiet
// is never read off held bytes, and at most holdLimit.
func (s *Scanner) MaxWait() time.Duration {
	return min(holdLimit, s.cues.QuietTime/3)
}

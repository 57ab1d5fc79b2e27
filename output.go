package relay

import (
	"context"
	"strings"
)

// outputLines fires Output for each line in lines, when someone listens.
func (s *session) outputLines(ctx context.Context, lines []string) {
	if len(s.r.eventHandlers(Output)) == 0 {
		return
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			s.fire(ctx, EventInfo{Event: Output, Line: l})
		}
	}
}

// newScreenLines returns the lines of the screen text now that were not on
// it at the last call (counted, so a line written again is new again), for
// Output on the screen path, which fires when the agent becomes idle.
func (s *session) newScreenLines(now string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	before := map[string]int{}
	for _, l := range strings.Split(s.lastScreen, "\n") {
		before[strings.TrimRight(l, " ")]++
	}
	s.lastScreen = now
	var out []string
	for _, l := range strings.Split(now, "\n") {
		l = strings.TrimRight(l, " ")
		if before[l] > 0 {
			before[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

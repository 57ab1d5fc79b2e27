package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
)

// TestAgentsUnknownTimes: a presence record without a start time (or a
// last-seen time) shows "-", not the age of year 1 ("106751d23h ago").
func TestAgentsUnknownTimes(t *testing.T) {
	now := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name        string
		since, seen time.Time
		want        []string // SINCE and LAST SEEN
	}{
		{"both known", now.Add(-3 * time.Minute), now.Add(-4 * time.Second), []string{"3m0s ago", "4s ago"}},
		{"no start", time.Time{}, now.Add(-4 * time.Second), []string{"-", "4s ago"}},
		{"nothing", time.Time{}, time.Time{}, []string{"-", "-"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			p := bus.Presence{Name: "Alice", State: bus.StateIdle, Since: c.since, Seen: c.seen}
			if err := writeAgents(&out, now, []bus.Presence{p}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if len(lines) != 2 {
				t.Fatalf("table:\n%s", out.String())
			}
			// NAME CLI STATE SINCE… : the columns after the state.
			row := strings.Fields(lines[1])
			got := strings.Join(row[3:len(row)-2], " ")
			if want := strings.Join(c.want, " "); got != want {
				t.Errorf("since and last seen %q, want %q\n%s", got, want, out.String())
			}
			if strings.Contains(out.String(), "106751d") {
				t.Errorf("a zero time shown as an age:\n%s", out.String())
			}
		})
	}
}

package session

import (
	"strconv"
	"testing"

	"github.com/relayhq/relay/bus"
)

// TestRecentKeepsTheLastMessages: the recent messages are the last
// recentMessages, oldest first, however many came.
func TestRecentKeepsTheLastMessages(t *testing.T) {
	for _, n := range []int{0, 1, recentMessages, recentMessages + 1, 5 * recentMessages} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var r recent
			for i := range n {
				r.addMessage(bus.Envelope{ID: "m" + strconv.Itoa(i)})
			}
			_, got := r.snapshot()
			want := min(n, recentMessages)
			if len(got) != want {
				t.Fatalf("%d messages kept, want %d", len(got), want)
			}
			for i, m := range got {
				if w := "m" + strconv.Itoa(n-want+i); m.ID != w {
					t.Fatalf("message %d is %s, want %s", i, m.ID, w)
				}
			}
			if n > recentMessages {
				if a := testing.AllocsPerRun(100, func() { r.addMessage(bus.Envelope{ID: "x"}) }); a != 0 {
					t.Errorf("a message into a full list allocates %v times, want 0", a)
				}
			}
		})
	}
}

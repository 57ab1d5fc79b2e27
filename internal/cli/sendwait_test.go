package cli

import (
	"errors"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
)

// TestNotReached: a wait that ended says, for a message to one agent, the
// stage it is at and why; for a broadcast, each recipient that did not
// reach the stage.
func TestNotReached(t *testing.T) {
	held := bus.Outcome{Agent: "bob", Last: bus.Stage{Stage: bus.StatusHeld, Reason: "busy: it goes in when the agent's turn ends"}}
	seen := bus.Outcome{Agent: "carol", Reached: true, Last: bus.Stage{Stage: bus.StatusSeen}}
	queued := bus.Outcome{Agent: "dave", Last: bus.Stage{Stage: bus.StatusQueued}}
	tests := []struct {
		name string
		to   string
		outs []bus.Outcome
		want string
	}{
		{"direct", "bob", []bus.Outcome{held}, "not seen within 5s: held (busy: it goes in when the agent's turn ends) (relay log --id m1)"},
		{"broadcast", bus.Broadcast, []bus.Outcome{held, seen, queued},
			"not seen within 5s by every recipient: bob: held (busy: it goes in when the agent's turn ends); dave: queued (relay log --id m1)"},
		{"not in the log", "bob", nil, "not seen within 5s: not in the log yet (relay log --id m1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := notReached(bus.Envelope{ID: "m1", To: tt.to}, bus.StatusSeen, 5*time.Second, tt.outs)
			if err.Error() != tt.want {
				t.Errorf("%q\nwant %q", err, tt.want)
			}
		})
	}
}

// TestParseWait: --wait takes the stages a message can be waited for.
func TestParseWait(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bus.Status
		bad  bool
	}{{"", "", false}, {"delivered", bus.StatusDelivered, false}, {"Seen", bus.StatusSeen, false},
		{"answered", bus.StatusAnswered, false}, {"queued", "", true}, {"read", "", true}} {
		got, err := parseWait(tt.in)
		var ue *UsageError
		if got != tt.want || (err != nil) != tt.bad || (err != nil && !errors.As(err, &ue)) {
			t.Errorf("parseWait(%q) = %q, %v; want %q, usage error %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

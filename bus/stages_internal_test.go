package bus

import (
	"strings"
	"testing"
)

// TestAddStage: a later receipt of a lower stage is recorded but does not
// undo a higher status; failed is undone by a retry's progress.
func TestAddStage(t *testing.T) {
	tests := []struct {
		name   string
		stages []Status
		want   Status
		list   string
	}{
		{"in order", []Status{StatusQueued, StatusDelivered, StatusSeen, StatusAnswered}, StatusAnswered, "queued delivered seen answered"},
		{"held after delivered", []Status{StatusQueued, StatusDelivered, StatusHeld}, StatusDelivered, "queued delivered held"},
		{"delivered again after seen", []Status{StatusQueued, StatusDelivered, StatusSeen, StatusDelivered}, StatusSeen, "queued delivered seen"},
		{"failed then retried", []Status{StatusQueued, StatusFailed, StatusDelivered}, StatusDelivered, "queued failed delivered"},
		{"failed after delivered", []Status{StatusQueued, StatusDelivered, StatusFailed}, StatusFailed, "queued delivered failed"},
		{"an older relay's confirmed", []Status{StatusQueued, StatusDelivered, StatusConfirmed}, StatusSeen, "queued delivered seen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Entry{Status: map[string]Status{}}
			for _, st := range tt.stages {
				e.addStage(Stage{Agent: "bob", Stage: st})
			}
			if e.Status["bob"] != tt.want {
				t.Errorf("status %q, want %q", e.Status["bob"], tt.want)
			}
			var got []string
			for _, s := range e.StagesOf("bob") {
				got = append(got, string(s.Stage))
			}
			if strings.Join(got, " ") != tt.list {
				t.Errorf("stages %q, want %q", strings.Join(got, " "), tt.list)
			}
		})
	}
}

// TestReached: the stages a wait accepts as reached.
func TestReached(t *testing.T) {
	tests := []struct {
		st, want Status
		ok       bool
	}{
		{StatusQueued, StatusDelivered, false},
		{StatusHeld, StatusDelivered, false},
		{StatusDelivered, StatusDelivered, true},
		{StatusDelivered, StatusSeen, false},
		{StatusSeen, StatusDelivered, true},
		{StatusAnswered, StatusSeen, true},
		{StatusFailed, StatusDelivered, false},
		{StatusFailed, StatusFailed, false},
	}
	for _, tt := range tests {
		if got := Reached(tt.st, tt.want); got != tt.ok {
			t.Errorf("Reached(%s, %s) = %v, want %v", tt.st, tt.want, got, tt.ok)
		}
	}
}

package bus

import (
	"testing"
	"time"
)

// TestStaleAfterMissedBeats: a record reads offline (and its claim may be
// taken over) once it was not rewritten for OfflineAfter its own
// heartbeat, by the hub's timestamp; a record that says offline at once.
func TestStaleAfterMissedBeats(t *testing.T) {
	created := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		rec   record
		after time.Duration
		stale bool
	}{
		{"wrapper, just under 30 s", record{State: StateIdle, Heartbeat: 10000}, 29900 * time.Millisecond, false},
		{"wrapper, just over 30 s", record{State: StateIdle, Heartbeat: 10000}, 30100 * time.Millisecond, true},
		{"2 s heartbeat, over 6 s", record{State: StateBusy, Heartbeat: 2000}, 6100 * time.Millisecond, true},
		{"no heartbeat said: 2 s", record{State: StateIdle}, 5900 * time.Millisecond, false},
		{"offline at once", record{State: StateOffline, Heartbeat: 10000}, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rec.stale(created, created.Add(tc.after)); got != tc.stale {
				t.Errorf("stale after %v = %v, want %v", tc.after, got, tc.stale)
			}
		})
	}
	if got := OfflineAfter(10 * time.Second); got != 30*time.Second {
		t.Errorf("OfflineAfter(10s) = %v, want 30s", got)
	}
}

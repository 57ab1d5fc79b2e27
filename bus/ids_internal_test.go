package bus

import "testing"

// TestDedupIDsFollowTheCredential: a sender's de-duplication headers are
// the same in every process that holds its credential (so a message sent
// again with its id after a timeout is kept once) and differ for any
// other credential, which therefore cannot publish them first.
func TestDedupIDsFollowTheCredential(t *testing.T) {
	header := func(o Options) string {
		c := &Client{opts: o, dedupKey: newDedupKey(o)}
		return c.dedupID("lrKK9J5VKm3uhWFaRNJQKW")
	}
	alice := Options{Name: "Alice", Token: "alice-secret"}
	tests := []struct {
		name string
		a, b Options
		same bool
	}{
		{"same token, two processes", alice, alice, true},
		{"token in the URL", Options{Name: "Alice", URL: "nats://alice-secret@127.0.0.1:4222"}, alice, true},
		{"another credential", Options{Name: "Alice", Token: "mallory-secret"}, alice, false},
		{"no credential draws a random key", Options{Name: "Alice"}, Options{Name: "Alice"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := header(tt.a) == header(tt.b); got != tt.same {
				t.Errorf("same header = %v, want %v (%s vs %s)", got, tt.same, header(tt.a), header(tt.b))
			}
		})
	}
}

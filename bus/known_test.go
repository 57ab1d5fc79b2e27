package bus_test

import (
	"context"
	"testing"
)

// TestIsAgent: a registered agent is one, a name that never registered
// (a person using relay send) is not.
func TestIsAgent(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	register(t, h, "bob")
	ctx := context.Background()
	for name, want := range map[string]bool{"bob": true, "alice": true, "carol": false, "Bob": false} {
		got, err := alice.IsAgent(ctx, name)
		if err != nil || got != want {
			t.Errorf("IsAgent(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
}

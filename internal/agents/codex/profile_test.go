package codex

import (
	"testing"
	"time"
)

// TestSettleShort: the pause between a paste and its Enter stays a small
// margin (relay waits for the input box to show the paste first): a
// message's way into Codex should not idle away a third of the 300 ms
// round trip of issue 22.
func TestSettleShort(t *testing.T) {
	if s := Profile().Settle; s > 50*time.Millisecond {
		t.Fatalf("Codex's Settle is %v; want at most 50 ms", s)
	}
}

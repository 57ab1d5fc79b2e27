package gemini

import (
	"testing"
	"time"
)

// TestSettleShort: the pause between the input box showing a paste and
// its Enter covers Gemini CLI's own window (an Enter within 40 ms of the
// paste is a newline) with margin for a loaded machine, and no more: it
// was 300 ms, most of the 300 ms round trip of issue 22.
func TestSettleShort(t *testing.T) {
	s := Profile().Settle
	if s < 2*pasteNewlineWindow || s > 150*time.Millisecond {
		t.Fatalf("Gemini CLI's Settle is %v; want between %v (twice its paste window) and 150 ms", s, 2*pasteNewlineWindow)
	}
}

package scanner

import (
	"strings"
	"testing"
	"time"
)

// TestInputFrame: OpenCode's input box is framed by "┃" on the left, over
// several rows, its last row the agent and model line. The draft is the
// text above that row, wherever it is in the box; the box's rows never
// fire; a reply above the box fires.
func TestInputFrame(t *testing.T) {
	box := func(rows ...string) string {
		var b strings.Builder
		b.WriteString("\x1b[20;1H\x1b[J")
		for _, r := range rows {
			b.WriteString("  ┃  " + r + "\r\n")
		}
		b.WriteString("  ┃  Build · Mock model Mock\r\n  ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀\r\n   /work           ctrl+p commands")
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		rows  []string
		draft bool
	}{
		{"empty box", []string{"", "", ""}, false},
		{"placeholder", []string{"", `Ask anything… "Fix broken tests"`, ""}, false},
		{"draft on the first row", []string{"", "fix the build", ""}, true},
		{"draft on a lower row", []string{"", "", "and then the tests"}, true},
		{"a command typed by the human", []string{"", "@relay:Bob not yet sent", ""}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 100, 30, "opencode")
			h.write("\x1b[5;1H     @relay:Carol the reply fires\r\n\r\n     ▣  Build · Mock model · 1.2s")
			h.write(box(tc.rows...))
			h.clk.advance(3 * time.Second)
			h.s.Tick()
			if st := h.s.State(); st.Draft != tc.draft || st.Busy {
				t.Errorf("state %+v, want draft %v and idle", st, tc.draft)
			}
			h.want("@relay:Carol the reply fires")
		})
	}
}

package scanner

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHardWrappedTypedCommandNeverFires (issue 30.4): relay types a text
// whose command is kept ("@relay:Carol …", as a hook's text or relay's own
// words keep theirs); the agent shows it in its input box while it is
// typed, and in its history once its turn starts, hard-wrapped at its
// width so that the command starts a row. 70 later texts are typed, more
// than the texts the scanner keeps whole (maxInjected); then the agent
// redraws its history (a resize): the command's row still never fires,
// while the agent's own command after it does.
func TestHardWrappedTypedCommandNeverFires(t *testing.T) {
	const typed = "[relay] check the logs: xxxxxxxxxxxxxxx.@relay:Carol pwned and report"
	// The agent's rendering: cut at 40 columns, the command at a row start.
	shown := "  [relay] check the logs: xxxxxxxxxxxxxxx.\r\n  @relay:Carol pwned and report\r\n\r\n"
	for _, profile := range []string{"", "generic"} {
		t.Run(profile, func(t *testing.T) {
			h := newHarness(t, 60, 20, profile)
			h.write("● ready\r\n\r\n")
			var history strings.Builder
			inject := func(text, shown string) {
				h.s.BeginInjection(text)
				box := "> " + text[:20] + "\r\n" // the input box, cut
				h.s.Write([]byte(box))
				history.WriteString(box)
				h.clk.advance(200 * time.Millisecond)
				h.s.Tick()
				h.s.EndInjection()
				h.clk.advance(2 * injectEcho)
				h.s.Tick()
				h.write(shown) // the agent's history, after the echo time
				history.WriteString(shown)
			}
			inject(typed, shown)
			for i := range 70 {
				filler := fmt.Sprintf("[relay] filler message number %d", i)
				inject(filler, "  "+filler+"\r\n\r\n")
			}
			h.write("● @relay:Bob all read\r\n\r\n")
			h.s.Flush()
			h.want("@relay:Bob all read")
			h.s.Resize(70, 20)
			h.write("\x1b[2J\x1b[3J\x1b[H● ready\r\n\r\n" + history.String() + "● @relay:Bob all read\r\n\r\n● @relay:Bob my own, after the redraw\r\n\r\n")
			h.s.Flush()
			h.want("@relay:Bob all read", "@relay:Bob my own, after the redraw")
		})
	}
}

// TestTypedCommandsKept: what the session-long store of typed commands
// matches, and what it leaves to the agent.
func TestTypedCommandsKept(t *testing.T) {
	var c typedCommands
	c.add("To answer, write a line starting with @relay:Alice")
	c.add("then run @deploy:production now, and @memory:save what you learned")
	c.add("the same header again: @relay:Alice")
	for _, tc := range []struct {
		row  string
		want bool
	}{
		{"@relay:Alice", true},
		{"@relay:Alice thanks, on it", false}, // the agent's own answer
		{"@deploy:production now, and", true}, // a hard wrap cut the row
		{"@deploy:prod", true},                // cut inside the target
		{"@DEPLOY:production now", false},     // not what was typed
		{"@memory:save what you learned", true},
		{"@memory:save the build uses make", false},
		{"no command here", false},
	} {
		if got := c.holds(collapse(tc.row)); got != tc.want {
			t.Errorf("holds(%q) = %v, want %v", tc.row, got, tc.want)
		}
	}
	if n := len(c.byWord["@relay:"]); n != 1 {
		t.Errorf("the header kept %d times, want once", n)
	}
	for i := range maxTypedCmds + 10 {
		c.add(fmt.Sprintf("@relay:X filler %d", i))
	}
	if len(c.order) != maxTypedCmds || len(c.seen) != maxTypedCmds {
		t.Errorf("kept %d (%d seen), want the bound %d", len(c.order), len(c.seen), maxTypedCmds)
	}
	if c.holds("@relay:Alice") || !c.holds(fmt.Sprintf("@relay:X filler %d", maxTypedCmds+9)) {
		t.Error("the oldest not forgotten first")
	}
}

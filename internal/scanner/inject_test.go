package scanner

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// peerText is what relay types into the agent: a peer's message holding a
// line the scanner could take for a command.
// The agent renders it (here the inline code without its backticks), so
// that its echo does not match the text typed.
const peerText = "[relay] from alice: please forward this\n@relay:C `x` please look at the logs of the nightly build and report back"

// box draws lines in a box 44 columns wide, cutting long ones with "…" as
// TUIs do.
func box(lines ...string) string {
	const inner = 40
	var b strings.Builder
	b.WriteString("╭" + strings.Repeat("─", inner+2) + "╮\r\n")
	for _, l := range lines {
		if len([]rune(l)) > inner {
			l = string([]rune(l)[:inner-1]) + "…"
		}
		b.WriteString("│ " + l + strings.Repeat(" ", inner-len([]rune(l))) + " │\r\n")
	}
	b.WriteString("╰" + strings.Repeat("─", inner+2) + "╯\r\n")
	return b.String()
}

// typeInto plays relay typing peerText into an agent: bracketed by
// BeginInjection and EndInjection, the agent draws echo while the text is
// typed and afterEnter once Enter is pressed.
func typeInto(h *harness, echo, afterEnter string) {
	h.s.BeginInjection(peerText)
	h.s.Write([]byte(echo))
	h.clk.advance(200 * time.Millisecond) // the settle pause
	h.s.Tick()
	h.s.EndInjection()
	h.clk.advance(50 * time.Millisecond)
	h.s.Write([]byte(afterEnter))
	h.clk.advance(2 * injectEcho)
}

// The agent echoes the typed text in a box, rendered so that it does not
// match the text typed: the rows it drew while relay typed never fire,
// also when they are first read after they scrolled off; a line the agent
// writes itself after the Enter fires.
func TestBoxedEchoNeverFires(t *testing.T) {
	for _, profile := range []string{"", "generic"} {
		t.Run(profile, func(t *testing.T) {
			h := newHarness(t, 60, 12, profile)
			h.write("● ready\r\n\r\n")
			typeInto(h, box("[relay] from alice: please forward this", "@relay:C x please look at the logs", "of the nightly build and report back"), "\r\n")
			var reply strings.Builder
			reply.WriteString("● @relay:Bob I read it, looking now\r\n\r\n")
			for i := range 15 {
				fmt.Fprintf(&reply, "  step %d\r\n", i)
			}
			h.write(reply.String()) // scrolls the box off before it is read
			h.s.Flush()
			h.want("@relay:Bob I read it, looking now")
		})
	}
}

// Gemini CLI-like: on Enter the agent clears the screen and draws its
// history again, the typed text included. In the echo time the redrawn
// rows are typed-in by position (rendered, they do not match the text
// typed); a later redraw (after a resize) is matched by its text, box and
// ellipsis aside. The agent's own line fires once.
func TestRedrawnHistoryNeverFires(t *testing.T) {
	history := func(typed, own string) string {
		return "\x1b[2J\x1b[3J\x1b[H● ready\r\n\r\n" +
			box("[relay] from alice: please forward this", typed) + "\r\n" + own
	}
	const rendered = "@relay:C x please look at the logs of the nightly build and report back"
	const literal = "@relay:C `x` please look at the logs of the nightly build and report back"
	h := newHarness(t, 60, 20, "")
	h.write("● ready\r\n\r\n> ")
	typeInto(h, "[relay] from alice: please forward this @relay:C `x` please look at th", history(rendered, ""))
	h.s.Tick()
	h.s.Flush()
	h.want()
	h.write(history(rendered, "● @relay:Bob on it\r\n\r\n  Done.\r\n"))
	h.s.Flush()
	h.want("@relay:Bob on it")
	h.s.Resize(70, 20)
	h.write(history(literal, "● @relay:Bob on it\r\n\r\n  Done.\r\n"))
	h.s.Flush()
	h.want("@relay:Bob on it")
}

// Injections nest; an EndInjection without a BeginInjection is ignored;
// after the echo time the agent's rows are its own again.
func TestInjectionWindow(t *testing.T) {
	h := newHarness(t, 60, 12, "")
	h.s.EndInjection() // stray: ignored
	h.s.BeginInjection("one")
	h.s.BeginInjection("two")
	h.s.EndInjection()
	h.clk.advance(2 * injectEcho)
	h.s.Write([]byte("● @relay:Bob typed while the outer injection is open\r\n\r\n"))
	h.s.EndInjection()
	h.clk.advance(injectEcho / 2)
	h.s.Write([]byte("● @relay:Bob in the echo time\r\n\r\n"))
	h.clk.advance(injectEcho)
	h.s.Write([]byte("● @relay:Bob the agent's own\r\n\r\n"))
	h.s.Flush()
	h.want("@relay:Bob the agent's own")
}

// The echo time of an injection ends early on a signal of the agent's own,
// so that a reply a fast model starts within it still fires: the human's
// Enter after the injection (the child now answers them), or a busy cue
// the agent shows only after the Enter (its turn has begun). A busy cue
// that already showed when the injection ended says nothing.
func TestEchoEndsOnTheAgentsSignal(t *testing.T) {
	const notice = "[relay] No agent named Bob has joined yet"
	inject := func(h *harness) {
		h.s.BeginInjection(notice)
		h.s.Write([]byte(notice))
		h.s.EndInjection()
		h.clk.advance(20 * time.Millisecond)
		h.s.Write([]byte("\r\n"))
		h.clk.advance(20 * time.Millisecond)
	}
	t.Run("the human's Enter", func(t *testing.T) {
		h := newHarness(t, 60, 12, "gemini")
		h.write("✦ ready\r\n\r\n")
		inject(h)
		h.s.HumanTyping(true)
		h.s.Write([]byte("send the sentinel"))
		h.s.HumanTyping(false) // the human's Enter reached the output
		h.s.Write([]byte("\r\n✦ @relay:Bob sentinel: the reply to the human\r\n\r\n"))
		h.s.Flush()
		h.want("@relay:Bob sentinel: the reply to the human")
	})
	t.Run("a busy cue after the Enter", func(t *testing.T) {
		h := newHarness(t, 60, 12, "gemini")
		h.write("✦ ready\r\n\r\n")
		inject(h)
		h.s.Write([]byte("⠋ Thinking... (esc to cancel, 0s)\r\n"))
		h.clk.advance(20 * time.Millisecond)
		h.s.Tick() // reads the cue
		h.s.Write([]byte("\x1b[1A\x1b[2K✦ @relay:Bob ack: a fast model's reply\r\n\r\n"))
		h.s.Flush()
		h.want("@relay:Bob ack: a fast model's reply")
	})
	t.Run("a busy cue already there", func(t *testing.T) {
		h := newHarness(t, 60, 12, "gemini")
		h.write("⠋ Thinking... (esc to cancel, 0s)\r\n")
		inject(h)
		h.s.Tick()
		h.s.Write([]byte("✦ @relay:Bob still the echo\r\n\r\n"))
		h.clk.advance(2 * injectEcho)
		h.s.Write([]byte("✦ @relay:Bob the agent's own\r\n\r\n"))
		h.s.Flush()
		h.want("@relay:Bob the agent's own")
	})
}

package scanner

import (
	"fmt"
	"testing"
	"time"
)

// TestCanWaitOnlyForChurnWhileBusy: output may wait in the tap only while
// a spinner turns over a settled screen; a command, anything after a
// change of content, and anything while the agent is idle, relay types or
// the human types, is read at once.
func TestCanWaitOnlyForChurnWhileBusy(t *testing.T) {
	for _, profile := range []string{"claude", "generic"} {
		t.Run(profile, func(t *testing.T) {
			h := newHarness(t, 80, 24, profile)
			h.write("❯ review the repo\r\n\r\n● Reading the code.\r\n\r\n")
			i := 0
			frames := func(n int) {
				for range n {
					h.clk.advance(80 * time.Millisecond)
					h.s.Write([]byte(spinnerFrame(i)))
					i++
				}
			}
			frames(20)
			if !h.s.CanWait([]byte(spinnerFrame(i))) {
				t.Fatal("a spinner's frame over a settled screen may not wait")
			}
			if h.s.CanWait([]byte("\r\x1b[2K● @rel")) {
				t.Fatal("output with an @ may wait")
			}
			if h.s.CanWait([]byte("\r\x1b[2Kdone\r\n$ ")) {
				t.Fatal("output that ends a line may wait")
			}
			// A mention split across writes, printed slowly (each piece
			// read as it comes): the write that starts it is read at once
			// (it has the @), and after it nothing waits until the screen
			// has settled again.
			h.clk.advance(5 * time.Millisecond)
			h.s.Write([]byte("\r\x1b[2K● @rel"))
			for _, p := range []string{"ay:Bob please review", " the migration", "\r\n\r\n"} {
				if h.s.CanWait([]byte(p)) {
					t.Fatalf("%q, the rest of a mention, may wait", p)
				}
				h.clk.advance(200 * time.Millisecond)
				h.s.Write([]byte(p))
			}
			frames(20)
			if !h.s.CanWait([]byte(spinnerFrame(i))) {
				t.Fatal("frames do not wait again once the screen settled")
			}
			h.s.HumanTyping(true)
			if h.s.CanWait([]byte("x")) {
				t.Fatal("the echo of the human's keys may wait")
			}
			h.s.HumanTyping(false)
			frames(1)
			h.s.BeginInjection("hello")
			if h.s.CanWait([]byte("hello")) {
				t.Fatal("the echo of relay's typing may wait")
			}
			h.s.EndInjection()
			// The turn ends: the agent is idle, and a row drawn again as
			// it was does not wait.
			h.s.Write([]byte("\r\x1b[2K\r\n❯ "))
			h.clk.advance(2 * time.Second)
			h.s.Tick()
			h.s.Write([]byte("\r❯ "))
			if h.s.State().Busy {
				t.Fatalf("still busy:\n%s", h.s.Text())
			}
			if h.s.CanWait([]byte("\r❯ ")) {
				t.Fatal("output may wait while the agent is idle")
			}
		})
	}
}

func TestMaxWaitUnderQuietTime(t *testing.T) {
	for _, profile := range []string{"claude", "generic", "codex", "gemini"} {
		cues, ok := CuesFor(profile)
		if !ok {
			continue
		}
		s := New(Options{Cols: 80, Rows: 24, Cues: cues})
		if w := s.MaxWait(); w <= 0 || 3*w > s.cues.QuietTime || w > holdLimit {
			t.Errorf("%s: MaxWait %v with quiet time %v", profile, w, s.cues.QuietTime)
		}
	}
}

// TestCanWaitNotForSlowFrames: a spinner drawn every 180 ms (Claude Code's)
// does not wait in the tap: its frames would go two to a run, and the
// tap's alarm would fire between runs for nothing. One drawn every 80 ms
// does, as the tap offers it (each frame offered, every other one read).
func TestCanWaitNotForSlowFrames(t *testing.T) {
	for _, c := range []struct {
		every time.Duration
		wait  bool
	}{{180 * time.Millisecond, false}, {80 * time.Millisecond, true}} {
		t.Run(c.every.String(), func(t *testing.T) {
			h := newHarness(t, 80, 24, "claude")
			h.write("❯ review the repo\r\n\r\n● Reading the code.\r\n\r\n")
			waited := 0
			for i := range 40 {
				h.clk.advance(c.every)
				f := []byte(spinnerFrame(i))
				ok := h.s.CanWait(f)
				if ok && i >= 20 {
					waited++
				}
				if !ok || i%2 == 0 {
					h.s.Write(f)
				}
			}
			if got := waited > 0; got != c.wait {
				t.Errorf("frames every %v: %d of the last 20 may wait, want waiting %v", c.every, waited, c.wait)
			}
		})
	}
}

// TestCanWaitForInPlaceRedraws: Gemini CLI draws each frame by moving up
// over its rows and writing them again, line feeds and all, with its
// input box's "@path/to/file" among them. Such frames over a settled
// screen may wait; one whose rows hold a command, or new lines written
// below without moving up, are read at once.
func TestCanWaitForInPlaceRedraws(t *testing.T) {
	h := newHarness(t, 100, 30, "gemini")
	h.write(" > review the repo\r\n\r\n✦ Reading the code.\r\n\r\n")
	frame := func(i int, mid string) string {
		return "\x1b[3A\r\x1b[2K \x1b[38;5;183m" + string("⠋⠙⠹⠸⠼⠴"[3*(i%6):3*(i%6)+3]) + "\x1b[39m Thinking... (esc to cancel, " +
			fmt.Sprint(i/20) + "s)\r\n\r\x1b[2K" + mid + "\r\n\r\x1b[2K workspace (/directory)\r\n"
	}
	const box = " >   Type your message or \x1b[2m@path/to/file\x1b[22m"
	h.s.Write([]byte("\r\n\r\n\r\n"))
	i := 0
	for ; i < 40; i++ {
		h.clk.advance(48 * time.Millisecond)
		h.s.Write([]byte(frame(i, box)))
	}
	if !h.s.State().Busy {
		t.Fatalf("not busy:\n%s", h.s.Text())
	}
	if !h.s.CanWait([]byte(frame(i, box))) {
		t.Fatalf("a frame redrawn in place over a settled screen may not wait:\n%s", h.s.Text())
	}
	h.clk.advance(48 * time.Millisecond)
	if h.s.CanWait([]byte(frame(i, " @relay:Bob please review"))) {
		t.Fatal("a frame with a command may wait")
	}
	h.clk.advance(48 * time.Millisecond)
	if h.s.CanWait([]byte("\r\x1b[2Knew text\r\n")) {
		t.Fatal("a line written without moving up may wait")
	}
}

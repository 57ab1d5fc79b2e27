package scanner

import (
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

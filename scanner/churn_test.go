package scanner

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testutil"
)

// spinnerFrame is frame i of a "Thinking…" status row drawn in place.
func spinnerFrame(i int) string {
	glyphs := []string{"·", "✢", "✳", "✶", "✻", "✽"}
	return fmt.Sprintf("\r\x1b[2K%s Thinking… (%ds · esc to interrupt)", glyphs[i%len(glyphs)], i/12)
}

// TestCommandBetweenSpinnerFrames: spinner frames are churn, skipped
// cheaply, but a command the agent prints between two frames (above the
// status row, in one write or split across writes and frames) fires
// exactly once, however long the spinner goes on after it.
func TestCommandBetweenSpinnerFrames(t *testing.T) {
	const cmd = "@relay:Bob please review the migration"
	cases := []struct {
		name    string
		profile string
		// print writes the command between frames k and k+1.
		print []string
	}{
		{"one write", "claude", []string{"\r\x1b[2K● " + cmd + "\r\n\r\n"}},
		{"one write, generic", "generic", []string{"\r\x1b[2K" + cmd + "\r\n"}},
		{"split mid-mention", "claude", []string{"\r\x1b[2K● @rel", "ay:Bob please review", " the migration\r\n\r\n"}},
		{"split mid-mention, generic", "generic", []string{"\r\x1b[2K@rel", "ay:Bob please review", " the migration\r\n"}},
		{"split at the line end", "generic", []string{"\r\x1b[2K" + cmd, "\r\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 80, 24, tc.profile)
			h.write("❯ review the repo\r\n\r\n● Reading the code.\r\n\r\n")
			i := 0
			frames := func(n int) {
				for range n {
					h.clk.advance(80 * time.Millisecond)
					h.s.Write([]byte(spinnerFrame(i)))
					if i%6 == 0 {
						h.s.Tick()
					}
					i++
				}
			}
			frames(40)
			for _, p := range tc.print {
				// The pieces come a few milliseconds apart, read or not
				// in between.
				h.clk.advance(5 * time.Millisecond)
				h.s.Write([]byte(p))
				h.s.Tick()
			}
			frames(200)
			// The turn ends: the status row goes, the input box comes.
			h.s.Write([]byte("\r\x1b[2K\r\n❯ "))
			h.settle()
			h.settle()
			if got := h.fired(); !slices.Equal(got, []string{cmd}) {
				t.Fatalf("fired %q, want %q once\nscreen:\n%s", got, cmd, h.s.Text())
			}
		})
	}
}

// TestSpinnerFramesCostNoPass: once the screen has settled, a spinner's
// frames (and a row drawn again as it was) read only the rows that
// changed: no full pass (view, extraction, matching) runs for them.
func TestSpinnerFramesCostNoPass(t *testing.T) {
	h := newHarness(t, 80, 24, "claude")
	h.write("❯ review the repo\r\n\r\n● @relay:Bob earlier command\r\n\r\n● Reading the code.\r\n\r\n❯ ")
	h.settle()
	h.want("@relay:Bob earlier command")
	h.s.Write([]byte("\r\x1b[2K"))
	h.settle()
	before := h.s.pass
	for i := range 500 {
		h.clk.advance(80 * time.Millisecond)
		h.s.Write([]byte(spinnerFrame(i)))
		if i%6 == 0 {
			h.s.Tick()
		}
	}
	if n := h.s.pass - before; n > 2 {
		t.Errorf("%d full passes for 500 spinner frames, want at most 2", n)
	}
	if st := h.s.State(); !st.Busy {
		t.Errorf("state %+v under a spinner, want busy", st)
	}
	h.want("@relay:Bob earlier command")
}

// TestRunClockSleepsWhenIdle: Run's clock stops once the screen is quiet
// and the state idle, and output wakes it: the state goes busy and turns
// idle again after the quiet time, with no ticker running meanwhile.
func TestRunClockSleepsWhenIdle(t *testing.T) {
	cues, _ := CuesFor("generic")
	cues.QuietTime = 50 * time.Millisecond
	s := New(Options{Cols: 80, Rows: 24, Cues: cues})
	states := make(chan State, 100)
	s.Subscribe(func(e Event) {
		if e.Kind == EventState {
			states <- e.State
		}
	})
	src := make(chanSource, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, src) }()
	t.Cleanup(func() { cancel(); <-done })
	dormant := func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.dormant {
			return fmt.Errorf("clock still ticking; state %+v", s.state)
		}
		return nil
	}
	waitIdle := func() {
		t.Helper()
		deadline := time.After(5 * time.Second)
		for {
			select {
			case st := <-states:
				if !st.Busy {
					return
				}
			case <-deadline:
				t.Fatal("never idle")
			}
		}
	}
	src <- []byte("$ ls\r\nfile\r\n$ ")
	waitIdle()
	testutil.Eventually(t, dormant)
	src <- []byte("echo hi\r\nhi\r\n$ ")
	waitIdle()
	testutil.Eventually(t, dormant)
}

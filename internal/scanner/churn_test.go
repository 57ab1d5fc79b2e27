package scanner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/testing/testutil"
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

// TestHardWrappedBodyUnderSpinner: pi wraps a command's body itself, over
// rows of their own (hard line breaks, no soft wrap), and streams them with
// its "Working..." loader redrawn below. The body's later rows lie below
// every row with a mention, where changed rows may be churn; they must
// still join the body: the command fires once, whole, however long the
// stream stalls between its rows.
func TestHardWrappedBodyUnderSpinner(t *testing.T) {
	const (
		row1 = " @relay:Bob The nightly build failed in three places: the auth service tests"
		row2 = " time out after 30 seconds, the billing migration leaves a lock on the"
		row3 = " invoices table; please take the first two."
	)
	want := "@relay:Bob " + collapse(strings.TrimSpace(strings.TrimPrefix(row1, " @relay:Bob"))+" "+row2+" "+row3)
	cases := []struct {
		name  string
		stall time.Duration // between two rows of the body, the loader turning
		piece int           // bytes of a row drawn at a time
	}{
		{"rows at once", 100 * time.Millisecond, 0},
		{"rows at once, long stalls", 3 * time.Second, 0},
		{"streamed in pieces", 100 * time.Millisecond, 24},
		{"streamed in pieces, long stalls", 3 * time.Second, 24},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newPiHarness(t)
			var body []string // the reply's rows drawn so far
			frame := 0
			// draw redraws the reply and what pi shows below it from row
			// 3 down, as pi's differential renderer does in one
			// synchronized update.
			draw := func(working bool) {
				var b strings.Builder
				b.WriteString("\x1b[?2026h\x1b[3;1H")
				for _, r := range body {
					b.WriteString("\x1b[2K" + r + "\r\n")
				}
				b.WriteString("\x1b[2K\r\n")
				if working {
					fmt.Fprintf(&b, "\x1b[2K%c Working...\r\n", []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")[frame%10])
					frame++
				}
				b.WriteString("\x1b[2K" + strings.Repeat("─", 80) + "\r\n\x1b[2K\r\n\x1b[2K" + strings.Repeat("─", 80) + "\x1b[J\x1b[?2026l")
				h.s.Write([]byte(b.String()))
			}
			// turn lets d pass with the loader turning every 80 ms.
			turn := func(d time.Duration) {
				for ; d > 0; d -= 80 * time.Millisecond {
					h.clk.advance(80 * time.Millisecond)
					draw(true)
					h.s.Tick()
				}
			}
			h.s.Write([]byte("\x1b[1;1H\x1b[2K fx-single\r\n"))
			body = append(body, " Sending the report.", "")
			draw(true)
			turn(2 * time.Second) // settled: only the loader changes
			for _, row := range []string{row1, row2, row3} {
				body = append(body, "")
				for n := 0; n < len(row); {
					n = len(row)
					if tc.piece > 0 {
						n = min(len(body[len(body)-1])+tc.piece, len(row))
					}
					body[len(body)-1] = row[:n]
					h.clk.advance(15 * time.Millisecond)
					draw(true)
					h.s.Tick()
					if n == len(row) {
						break
					}
				}
				if got := h.fired(); len(got) > 0 {
					t.Fatalf("fired %q before the body was complete", got)
				}
				turn(tc.stall)
			}
			body = append(body, "", " Done.")
			draw(true)
			turn(time.Second)
			draw(false) // the turn ends: the loader goes
			h.settle()
			h.settle()
			if got := h.fired(); !slices.Equal(got, []string{want}) {
				t.Fatalf("fired %q, want %q once\nscreen:\n%s", got, want, h.s.Text())
			}
		})
	}
}

// newPiHarness is a harness with pi's cues (internal/agents/pi: "Working..." while
// it works, no prompt glyph).
func newPiHarness(t *testing.T) *harness {
	t.Helper()
	ns, err := patterns.NewNamespaces()
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clk: &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	h.s = New(Options{Cols: 80, Rows: 24, Namespaces: ns, Cues: Cues{Busy: []string{"Working..."}}, Now: h.clk.now})
	h.s.Subscribe(func(e Event) {
		if e.Kind == EventCommand {
			h.cmds = append(h.cmds, e.Command)
		}
	})
	return h
}

// TestWrappedTailBetweenSpinnerFrames: a TUI keeps its status row turning
// below (drawn with the cursor saved and restored, at 12.5 fps) while a
// command streams in above, soft-wrapped: the rows after the mention's
// first hold no mention and change between frames, like churn, but are
// the command's body. The command fires once, whole, however the pieces
// fall between frames. A skip that took those rows for churn fires it
// cut short.
func TestWrappedTailBetweenSpinnerFrames(t *testing.T) {
	const body = "please rebase feature/auth onto main, rerun the integration suite against the staging database and send me the names of the tests that still fail afterwards"
	const cmd = "@relay:Bob " + body
	cases := []struct {
		name   string
		piece  int // bytes of the command written at a time
		frames int // spinner frames between two pieces
	}{
		{"one piece a frame", 7, 1},
		{"pieces between several frames", 13, 3},
		{"the tail in one piece", len(cmd) - 20, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 80, 24, "generic")
			h.write("$ agent --task review\r\nReading the repository.\r\n\r\n")
			i := 0
			frames := func(n int) {
				for range n {
					h.clk.advance(80 * time.Millisecond)
					h.s.Write(fmt.Appendf(nil, "\x1b7\x1b[22;1H\x1b[2K%s Thinking… (%ds)\x1b8",
						[]string{"·", "✢", "✳", "✶", "✻", "✽"}[i%6], i/12))
					if i%6 == 0 {
						h.s.Tick()
					}
					i++
				}
			}
			frames(30)
			for rest := cmd; rest != ""; {
				n := min(tc.piece, len(rest))
				h.s.Write([]byte(rest[:n]))
				rest = rest[n:]
				frames(tc.frames)
			}
			h.s.Write([]byte("\r\n\r\nWaiting for Bob.\r\n"))
			frames(100)
			h.s.Write([]byte("\x1b7\x1b[22;1H\x1b[2K\x1b8$ "))
			h.settle()
			h.settle()
			if got := h.fired(); !slices.Equal(got, []string{cmd}) {
				t.Fatalf("fired %q, want %q once\nscreen:\n%s", got, cmd, h.s.Text())
			}
		})
	}
}

// TestRunClockSleepsUnderBusySpinner: while a CLI's busy cue shows ("esc
// to interrupt") and only its spinner turns, the state cannot change with
// time, so Run's clock sleeps through the frames (issue 34). A command
// printed between frames still fires once, and when the cue goes (the
// status row redrawn without it, itself churn) the clock wakes and the
// state turns idle after the quiet time.
func TestRunClockSleepsUnderBusySpinner(t *testing.T) {
	cues, _ := CuesFor("claude")
	cues.QuietTime = 50 * time.Millisecond
	ns, err := patterns.NewNamespaces()
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Cols: 80, Rows: 24, Cues: cues, Namespaces: ns})
	events := make(chan Event, 1000)
	s.Subscribe(func(e Event) { events <- e })
	src := make(chanSource)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, src) }()
	t.Cleanup(func() { cancel(); <-done })
	dormant := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.dormant
	}
	status := func(text string) []byte { return []byte("\x1b7\x1b[9;1H\x1b[2K" + text + "\x1b8") }
	i := 0
	frame := func() {
		src <- status(fmt.Sprintf("%s Thinking… (%ds · esc to interrupt)", []string{"·", "✢", "✳", "✶", "✻", "✽"}[i%6], i/12))
		i++
		time.Sleep(2 * time.Millisecond) // a spinner's pace, quickened
	}
	src <- []byte("❯ review the repo\r\n\r\n● Reading the code.\x1b[11;1H❯ ")
	// The clock falls asleep under the turning spinner and stays asleep:
	// 50 frames in a row find it so.
	deadline := time.Now().Add(10 * time.Second)
	for asleep := 0; asleep < 50; {
		if time.Now().After(deadline) {
			t.Fatalf("the clock kept ticking under a busy spinner (%d frames)", i)
		}
		frame()
		if dormant() {
			asleep++
		} else {
			asleep = 0
		}
	}
	const cmd = "@relay:Bob please review the migration"
	src <- []byte("\x1b[5;1H● " + cmd + "\r\n\r\n● Running the tests.\x1b[11;3H")
	for range 100 {
		frame()
	}
	src <- status("✻ Worked for 9s")
	var fired []string
	deadline = time.Now().Add(10 * time.Second)
	for idle := false; !idle; {
		select {
		case e := <-events:
			switch e.Kind {
			case EventCommand:
				fired = append(fired, "@"+e.Command.NS+":"+e.Command.Target+" "+e.Command.Body)
			case EventState:
				idle = !e.State.Busy
			}
		case <-time.After(time.Until(deadline)):
			t.Fatalf("never idle after the busy cue went; screen:\n%s", s.Text())
		}
	}
	if !slices.Equal(fired, []string{cmd}) {
		t.Fatalf("fired %q, want %q once; screen:\n%s", fired, cmd, s.Text())
	}
}

// TestCommandAtViewTopAfterLongChurnFiresOnce: a command that scrolled
// off the screen, into the rows a pass reads above it for context, and
// then a minute of nothing but a spinner (passes skipped as churn), fires
// once: the next full pass reads it at the top of its view, its context
// cut short by the view's top, and takes it for the occurrence that fired,
// since the passes skipped were as good as passes that saw it there. (The
// recency that lets a cut context match was counted from the last full
// pass, a minute old, and the command fired again.)
func TestCommandAtViewTopAfterLongChurnFiresOnce(t *testing.T) {
	for _, profile := range []string{"generic", "claude", "codex", "gemini"} {
		// The command ends up beyond the screen's top by this many rows,
		// up to the top of the context a pass reads above the screen.
		for beyond := 1; beyond <= ctxRows; beyond++ {
			t.Run(fmt.Sprintf("%s/%d", profile, beyond), func(t *testing.T) {
				h := newHarness(t, 80, 24, profile)
				for i := range 10 {
					h.s.Write([]byte(fmt.Sprintf("● prose line %d before the command, long enough to matter\r\n", i)))
				}
				h.write("● @relay:Bob please review the migration\r\n\r\n")
				// 12 rows written; the cursor is on the screen's last row
				// once 23 are, and each row after scrolls one off.
				for i := range 23 - 12 + 10 + beyond - 2 {
					h.s.Write([]byte(fmt.Sprintf("  reply line %d after the command\r\n", i)))
				}
				h.settle()
				for i := range 600 {
					h.clk.advance(100 * time.Millisecond)
					h.s.Write([]byte(spinnerFrame(i)))
				}
				h.s.Write([]byte("\r\x1b[2K  more reply text at last\r\n\r\n"))
				h.settle()
				if len(h.cmds) != 1 {
					t.Errorf("fired %d times, want once: %+v", len(h.cmds), h.cmds)
				}
			})
		}
	}
}

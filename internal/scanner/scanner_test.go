package scanner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
)

// clock is a hand-moved clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// harness is a scanner on a fake clock that records its events.
type harness struct {
	t      *testing.T
	s      *Scanner
	clk    *clock
	cmds   []patterns.Command
	rows   []int
	states []State
}

func newHarness(t *testing.T, cols, rows int, profile string, extraNS ...string) *harness {
	t.Helper()
	cues, ok := CuesFor(profile)
	if !ok {
		t.Fatalf("no cues for %q", profile)
	}
	ns, err := patterns.NewNamespaces(extraNS...)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clk: &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	h.s = New(Options{Cols: cols, Rows: rows, Namespaces: ns, Cues: cues, Now: h.clk.now})
	h.s.Subscribe(func(e Event) {
		switch e.Kind {
		case EventCommand:
			h.cmds = append(h.cmds, e.Command)
			h.rows = append(h.rows, e.Row)
		case EventState:
			h.states = append(h.states, e.State)
		}
	})
	return h
}

// write feeds s, then lets time pass and ticks, so quiet rows settle.
func (h *harness) write(s string) {
	h.s.Write([]byte(s))
	h.settle()
}

func (h *harness) settle() {
	h.clk.advance(time.Second)
	h.s.Tick()
}

// fired returns the commands so far as "@ns:target body" strings.
func (h *harness) fired() []string {
	var out []string
	for _, c := range h.cmds {
		out = append(out, fmt.Sprintf("@%s:%s %s", c.NS, c.Target, collapse(c.Body)))
	}
	return out
}

func (h *harness) want(want ...string) {
	h.t.Helper()
	have := h.fired()
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		h.t.Fatalf("fired:\n  %s\nwant:\n  %s\nscreen:\n%s", strings.Join(have, "\n  "), strings.Join(want, "\n  "), h.s.Text())
	}
}

func TestSplitAcrossWrites(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.write("$ agent\r\n@relay:Bob Please run")
	h.want() // the cursor is still on the line: open
	h.write(" the integration tests")
	h.want()
	h.write("\r\nand report back.\r\n")
	h.want() // the cursor sits on the blank line after it: more may follow
	h.write("\r\nDone.\r\n")
	h.want("@relay:Bob Please run the integration tests and report back.")
	h.settle()
	h.want("@relay:Bob Please run the integration tests and report back.")
}

func TestHalfStreamedBehindBusyCue(t *testing.T) {
	h := newHarness(t, 80, 24, "claude")
	frame := func(reply string) string {
		// Claude Code-like: reply, spinner, input box, footer; the cursor
		// is hidden and parked in the input box.
		return "\x1b[?25l\x1b[H\x1b[2J● " + reply + "\x1b[10;1H✢ Cerebrating… (3s)\x1b[12;1H" + strings.Repeat("─", 80) +
			"\x1b[13;1H❯ \x1b[14;1H" + strings.Repeat("─", 80) + "\x1b[15;1H  esc to interrupt\x1b[13;3H"
	}
	h.write(frame("@relay:Bob Please run"))
	h.settle()
	h.want() // stalled mid-line while busy: not final
	h.write(frame("@relay:Bob Please run the tests.\r\n\r\n  Waiting for Bob"))
	h.want("@relay:Bob Please run the tests.")
	// The turn ends: the footer loses its busy cue, nothing fires again.
	h.write("\x1b[10;1H\x1b[2K✻ Worked for 3s\x1b[15;1H\x1b[2K")
	h.settle()
	h.want("@relay:Bob Please run the tests.")
}

func TestLastParagraphFiresWhenIdle(t *testing.T) {
	h := newHarness(t, 80, 24, "claude")
	h.write("\x1b[?25l\x1b[2;1H● @relay:Bob last words\x1b[8;1H❯ \x1b[9;1H  esc to interrupt")
	h.settle()
	h.want()
	h.write("\x1b[9;1H\x1b[2K")
	h.want("@relay:Bob last words")
}

func TestRedrawDoesNotFireAgain(t *testing.T) {
	h := newHarness(t, 80, 24, "generic")
	frame := "\x1b[H\x1b[2J● Three things:\r\n\r\n  @relay:Bob rebase onto main\r\n\r\n  Done.\r\n"
	h.write(frame)
	h.want("@relay:Bob rebase onto main")
	for range 3 {
		h.write(frame)
	}
	h.want("@relay:Bob rebase onto main")
}

func TestScrollDoesNotFireAgain(t *testing.T) {
	for _, profile := range []string{"generic", "claude"} {
		t.Run(profile, func(t *testing.T) {
			h := newHarness(t, 40, 10, profile)
			h.write("intro\r\n@relay:Bob hello there\r\n\r\n")
			h.want("@relay:Bob hello there")
			for i := range 30 {
				h.write(fmt.Sprintf("line %d\r\n", i)) // scrolls the command up and off
			}
			h.s.Flush()
			h.want("@relay:Bob hello there")
		})
	}
}

func TestScrolledOffUnseenFires(t *testing.T) {
	// Output so fast that the command never rests on screen: it is read
	// when it scrolls off, once.
	h := newHarness(t, 40, 10, "generic")
	var b strings.Builder
	b.WriteString("@relay:Bob from the scrollback\r\n\r\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "line %d\r\n", i)
	}
	h.s.Write([]byte(b.String()))
	h.want("@relay:Bob from the scrollback")
	h.settle()
	h.s.Flush()
	h.want("@relay:Bob from the scrollback")
	if h.rows[0] >= 0 {
		t.Errorf("row %d, want negative for a scrolled-off line", h.rows[0])
	}
}

func TestSameWordsInLaterReplyFireAgain(t *testing.T) {
	h := newHarness(t, 60, 20, "generic")
	h.write("> q1\r\n@relay:Bob ok\r\n\r\n")
	h.write("> q2\r\n@relay:Bob ok\r\n\r\n")
	h.write("@relay:Bob ok\r\n\r\n") // same words, right after: a new line
	h.want("@relay:Bob ok", "@relay:Bob ok", "@relay:Bob ok")
	// Much later, long after the first scrolled away, the same reply again.
	for i := range 100 {
		h.write(fmt.Sprintf("work %d\r\n", i))
	}
	h.write("@relay:Bob ok\r\n\r\n")
	h.want("@relay:Bob ok", "@relay:Bob ok", "@relay:Bob ok", "@relay:Bob ok")
}

func TestSameWordsInAltScreenAtSameRow(t *testing.T) {
	// A full-screen TUI shows a new conversation where the old one was:
	// the same words on the same row after different text fire again.
	h := newHarness(t, 60, 20, "generic")
	h.write("\x1b[?1049h\x1b[H\x1b[2J❯ first question\r\n\r\n● @relay:Bob ok\r\n\r\n")
	h.want("@relay:Bob ok")
	h.write("\x1b[H\x1b[2J❯ second question\r\n\r\n● @relay:Bob ok\r\n\r\n")
	h.want("@relay:Bob ok", "@relay:Bob ok")
}

func TestResizeDoesNotFireAgain(t *testing.T) {
	h := newHarness(t, 60, 20, "generic")
	draw := func(width int) string {
		// The TUI wraps its own text at the width and redraws on resize.
		words := strings.Fields("I will ask Bob now, he knows the migration code best of all of us.")
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J● ")
		col := 2
		for _, w := range words {
			if col+len(w)+1 > width {
				b.WriteString("\r\n  ")
				col = 2
			}
			b.WriteString(w + " ")
			col += len(w) + 1
		}
		b.WriteString("\r\n\r\n  @relay:Bob please review the migration\r\n\r\n  Done.\r\n")
		return b.String()
	}
	h.write(draw(60))
	h.want("@relay:Bob please review the migration")
	h.s.Resize(30, 20)
	h.write(draw(30))
	h.s.Resize(100, 30)
	h.write(draw(100))
	h.want("@relay:Bob please review the migration")
}

func TestResizeCutRowsNeverFire(t *testing.T) {
	// An inline program wrote a command over two rows and had not ended
	// it when the terminal shrank: the terminal cut the first row. The
	// program goes on without redrawing it, and output scrolls it away:
	// the cut command (which would read "... feature/auth a you see") never
	// fires, while a command written after the resize does.
	h := newHarness(t, 100, 10, "")
	h.write("  @relay:Bob Please run the integration tests on branch feature/auth and report back the failures\r\n  you see.\r\n")
	h.want()
	h.s.Resize(70, 10)
	h.write("\r\n  Done.\r\n\r\n")
	for i := range 12 {
		h.write(fmt.Sprintf("  line %d\r\n", i))
	}
	h.write("  @relay:Carol after the resize\r\n\r\n")
	h.s.Flush()
	h.want("@relay:Carol after the resize")
}

func TestClearAndRedrawDoesNotFireAgain(t *testing.T) {
	// Gemini-like: inline, and when its live area outgrows the window it
	// clears screen and scrollback and writes the whole conversation again.
	h := newHarness(t, 50, 8, "generic")
	conv := " > question\r\n\r\n✦ Sure.\r\n\r\n  @relay:Bob run the tests\r\n\r\n"
	for i := range 12 {
		conv += fmt.Sprintf("  detail %d\r\n", i)
	}
	conv += "\r\n  @broadcast: freeze at five\r\n\r\n"
	h.write(conv)
	h.want("@relay:Bob run the tests", "@broadcast: freeze at five")
	// The clear comes split across two writes.
	h.s.Write([]byte("\x1b[2J\x1b"))
	h.write("3J\x1b[H" + conv + "  more text\r\n")
	h.settle()
	h.want("@relay:Bob run the tests", "@broadcast: freeze at five")
	h.write("\r\n > again\r\n\r\n✦ @relay:Bob run the tests\r\n\r\n")
	h.want("@relay:Bob run the tests", "@broadcast: freeze at five", "@relay:Bob run the tests")
}

func TestClearSplitAcrossWrites(t *testing.T) {
	// A clear screen whose bytes arrive in two writes still starts a new
	// epoch: the command redrawn one row lower, indented, after the same
	// text is the same command.
	h := newHarness(t, 50, 10, "generic")
	h.write("Sure.\r\n\r\n@relay:Bob run the tests\r\n\r\n")
	h.want("@relay:Bob run the tests")
	h.s.Write([]byte("\x1b["))
	h.write("2J\x1b[H(redrawn)\r\nSure.\r\n\r\n  @relay:Bob run the tests\r\n\r\n")
	h.want("@relay:Bob run the tests")
}

func TestSoftWrapAtLastColumn(t *testing.T) {
	h := newHarness(t, 20, 6, "generic")
	h.write("@relay:Bob abcdefghi") // exactly 20 columns: the cursor waits at the edge
	h.write("jkl more\r\n\r\n")
	h.write("@relay:Bob abcd efgh ijk\r\n\r\n") // wraps at a space
	h.want("@relay:Bob abcdefghijkl more", "@relay:Bob abcd efgh ijk")
}

func TestMidLineMentionWrappedToRowStart(t *testing.T) {
	// The TUI wrapped a sentence so that a mention starts a row: not a
	// command, the previous row was full.
	h := newHarness(t, 40, 10, "")
	h.write("  Inline mention of a peer, for example\r\n  @relay:Carol in prose, never fires.\r\n\r\n")
	h.write("  Short line.\r\n  @relay:Bob a real command\r\n\r\n")
	h.want("@relay:Bob a real command")
}

func TestCodeColourNeverFires(t *testing.T) {
	h := newHarness(t, 80, 24, "claude")
	h.write("● Example:\r\n\r\n  \x1b[38;5;153m@relay:Example inside a code block\x1b[39m\r\n\r\n  @relay:Bob outside\r\n\r\n")
	h.want("@relay:Bob outside")
}

func TestInjectedNeverFires(t *testing.T) {
	h := newHarness(t, 60, 20, "claude")
	msg := "[relay] Message from Alice (id 7): can you check the build? Answer with: @relay:Alice your answer here"
	h.s.MarkInjected(msg)
	h.write("❯ [relay] Message from Alice (id 7): can you check the build?\r\n  Answer with:\r\n  @relay:Alice your answer here\r\n\r\n● @relay:Alice the build is green\r\n\r\n\x1b[18;1H❯ ")
	h.want("@relay:Alice the build is green")
}

func TestCJKAndEmoji(t *testing.T) {
	h := newHarness(t, 30, 10, "generic")
	h.write("● @relay:太郎 テストを実行して🚀結果を報告してください\r\n\r\n")
	h.want("@relay:太郎 テストを実行して🚀結果を報告してください")
}

func TestTabsAndCRLF(t *testing.T) {
	h := newHarness(t, 60, 10, "")
	h.write("@relay:Bob\tplease\tlook\r\n\r\n@broadcast: one\r\ntwo\r\n\r\n")
	h.want("@relay:Bob please look", "@broadcast: one two")
}

func TestTwoCommandsInOneWrite(t *testing.T) {
	h := newHarness(t, 60, 10, "generic")
	h.write("@relay:Bob one\r\n@relay:Carol two\r\n\r\n")
	h.want("@relay:Bob one", "@relay:Carol two")
}

func TestHugeLineIsBounded(t *testing.T) {
	h := newHarness(t, 80, 24, "generic")
	h.s.Write([]byte("@relay:Bob " + strings.Repeat("x", 1<<20) + "\r\n\r\n"))
	h.s.Flush()
	if len(h.cmds) != 1 {
		t.Fatalf("%d commands from one huge line, want 1", len(h.cmds))
	}
	if c := h.cmds[0]; len(c.Body) > patterns.MaxBodyBytes || !c.Truncated {
		t.Fatalf("body of %d bytes, truncated %v: want at most %d, truncated", len(c.Body), c.Truncated, patterns.MaxBodyBytes)
	}
}

func TestInvalidUTF8(t *testing.T) {
	h := newHarness(t, 60, 10, "generic")
	h.write("@relay:Bob caf\xe9 \xff\xfe ok\r\n\r\n")
	if len(h.cmds) != 1 || !strings.HasPrefix(h.cmds[0].Body, "caf") || !strings.HasSuffix(h.cmds[0].Body, "ok") {
		t.Fatalf("commands %+v", h.cmds)
	}
}

func TestStateBusyIdleDraft(t *testing.T) {
	h := newHarness(t, 60, 12, "codex")
	h.s.Write([]byte("\x1b[H• Working\x1b[8;1H  Working (0s • esc to interrupt)\x1b[10;1H› \x1b[2mAsk Codex to do anything\x1b[22m"))
	h.settle()
	if st := h.s.State(); !st.Busy || st.Draft {
		t.Fatalf("working with a placeholder: %+v", st)
	}
	h.s.Write([]byte("\x1b[8;1H\x1b[2K"))
	h.clk.advance(100 * time.Millisecond)
	h.s.Tick()
	if st := h.s.State(); !st.Busy {
		t.Fatalf("just changed: %+v, want busy", st)
	}
	h.settle()
	if st := h.s.State(); st.Busy || st.Draft {
		t.Fatalf("quiet: %+v, want idle without draft", st)
	}
	h.write("\x1b[10;1H\x1b[2K› fix the flaky test")
	if st := h.s.State(); !st.Draft {
		t.Fatalf("typed: %+v, want a draft", st)
	}
	h.write("\x1b[10;1H\x1b[2K› Ask Codex to do anything")
	if st := h.s.State(); st.Draft {
		t.Fatalf("placeholder (not faint): %+v, want no draft", st)
	}
	if len(h.states) < 3 {
		t.Fatalf("state events %+v", h.states)
	}
}

func TestDraftInInputBoxNeverFires(t *testing.T) {
	h := newHarness(t, 60, 12, "codex")
	h.write("\x1b[H• Done.\x1b[10;1H› @relay:Bob typed by the human, not sent yet")
	h.s.Flush()
	h.want()
	if !h.s.State().Draft {
		t.Fatal("want a draft")
	}
}

// TestPlainShellLines: in a plain shell (the generic profile) each line
// break ends a command, so the next prompt is not part of the body, and the
// command fires as soon as the line is done, without waiting for quiet.
func TestPlainShellLines(t *testing.T) {
	h := newHarness(t, 80, 24, "generic")
	h.write("$ echo '@relay:Bob run the tests'\r\n@relay:Bob run the tests\r\n$ ")
	h.want("@relay:Bob run the tests")
	h.write("ls\r\nfile1 file2\r\n$ ")
	h.settle()
	h.want("@relay:Bob run the tests") // the scroll and the new prompt fire nothing more
	h.write("echo again\r\n@relay:Bob run the tests\r\n$ ")
	h.want("@relay:Bob run the tests", "@relay:Bob run the tests") // the same words later fire again
}

// TestGeminiTitleState: Gemini CLI's window title says when it works and
// when it waits on its human (a tool approval), whatever the screen shows.
func TestGeminiTitleState(t *testing.T) {
	h := newHarness(t, 80, 24, "gemini")
	last := func() State {
		t.Helper()
		h.settle()
		if len(h.states) == 0 {
			t.Fatal("no state event")
		}
		return h.states[len(h.states)-1]
	}
	// Its input box, read once bracketed paste is on (Cues.PasteMode).
	h.write("\x1b[?2004h\x1b[20;1H > Type your message or @path/to/file")
	for _, tc := range []struct {
		title string
		want  State
	}{
		{"◇  Ready (work)", State{}},
		{"✦  Working… (work)", State{Busy: true}},
		{"✋  Action Required (work)", State{Busy: true, Waiting: true}},
		{"◇  Ready (work)", State{}},
	} {
		h.write("\x1b]2;" + tc.title + "\x07")
		got := last()
		if (got.Dialog != "") != got.Waiting {
			t.Errorf("title %q: waiting %v with the screen's text %q", tc.title, got.Waiting, got.Dialog)
		}
		if got.Dialog = ""; got != tc.want {
			t.Errorf("title %q: state %+v, want %+v", tc.title, got, tc.want)
		}
	}
}

// TestDialogState: a dialog on screen (Cues.Dialogs: Claude Code's
// permission dialog) means the agent waits on its human; once the human
// answered (Esc) and the dialog is gone, it does not.
func TestDialogState(t *testing.T) {
	h := newHarness(t, 80, 24, "claude")
	h.write("\x1b[H● Creating the marker.\x1b[10;1H Bash command\x1b[12;1H touch marker\x1b[14;1H Do you want to proceed?" +
		"\x1b[15;1H ❯ 1. Yes\x1b[16;1H   2. No\x1b[18;1H Esc to cancel · Tab to amend")
	h.settle()
	if st := h.s.State(); !st.Waiting || st.Busy {
		t.Fatalf("dialog up: %+v, want waiting, not busy", st)
	}
	h.write("\x1b[10;1H\x1b[J\x1b[10;1H  ⎿  Interrupted · What should Claude do instead?\x1b[20;1H❯ ")
	h.settle()
	if st := h.s.State(); st.Waiting || st.Busy {
		t.Fatalf("dialog answered: %+v, want idle", st)
	}
}

// TestGeminiStartQuiet: Gemini CLI started with --resume draws its input
// box, then loads the session (and drops an Enter typed meanwhile) about
// 0.6 s later: it first counts as idle after 2 s of quiet, and from then
// on after the usual quiet time.
func TestGeminiStartQuiet(t *testing.T) {
	h := newHarness(t, 80, 24, "gemini")
	h.clk.advance(3 * time.Second) // a blank screen while it loads is not the start's quiet
	h.s.Tick()
	h.s.Write([]byte("\x1b]0;◇  Ready (work)\x07\x1b[?2004h\x1b[H > Type your message or @path/to/file"))
	h.clk.advance(time.Second)
	h.s.Tick()
	if st := h.s.State(); !st.Busy {
		t.Fatalf("1 s after the first input box: %+v, want busy until 2 s of quiet", st)
	}
	h.clk.advance(time.Second)
	h.s.Tick()
	if st := h.s.State(); st.Busy {
		t.Fatalf("2 s after the first input box: %+v, want idle", st)
	}
	h.s.Write([]byte("\x1b[2;1H > a draft"))
	h.clk.advance(600 * time.Millisecond)
	h.s.Tick()
	if st := h.s.State(); st.Busy {
		t.Fatalf("0.6 s after a later change: %+v, want idle (the start is over)", st)
	}
}

// TestStartNeedsInputBox: at start, a CLI with an input box is idle only
// once the box is drawn. Qwen Code on a loaded machine names its window
// and draws its header, stays quiet for seconds, then shows
// "Initializing..." and only then its input box: what relay typed during
// that quiet was dropped (its primer never reached the model). Gemini CLI
// (Cues.PasteMode) reads its box only once it turned bracketed paste on:
// under load relay typed into the drawn box 20 s before, unshown, and the
// primer and the next message were lost or merged (TestThreeCLIs).
func TestStartNeedsInputBox(t *testing.T) {
	h := newHarness(t, 80, 24, "gemini")
	h.s.Write([]byte("\x1b]0;Qwen - work\x07\x1b[H │ >_ Qwen Code (v0.24.4) │\r\n │ API Key | mock-model │"))
	h.clk.advance(5 * time.Second)
	h.s.Tick()
	if st := h.s.State(); !st.Busy {
		t.Fatalf("a quiet header without the input box: %+v, want busy", st)
	}
	h.s.Write([]byte("\x1b[5;1H .. Initializing..."))
	h.clk.advance(5 * time.Second)
	h.s.Tick()
	if st := h.s.State(); !st.Busy {
		t.Fatalf("initializing: %+v, want busy", st)
	}
	h.s.Write([]byte("\x1b[5;1H\x1b[K > Type your message or @path/to/file"))
	h.clk.advance(3 * time.Second)
	h.s.Tick()
	if st := h.s.State(); !st.Busy {
		t.Fatalf("the input box drawn, bracketed paste still off (Gemini CLI not reading it yet): %+v, want busy", st)
	}
	h.s.Write([]byte("\x1b[?2004h"))
	h.clk.advance(3 * time.Second)
	h.s.Tick()
	if st := h.s.State(); st.Busy {
		t.Fatalf("quiet with the input box read: %+v, want idle", st)
	}
	// Once started, a screen without the box (a full-screen view) is idle
	// when quiet, as before.
	h.s.Write([]byte("\x1b[H\x1b[J a view of its own"))
	h.clk.advance(3 * time.Second)
	h.s.Tick()
	if st := h.s.State(); st.Busy {
		t.Fatalf("quiet without the box after the start: %+v, want idle", st)
	}
}

// TestSaidIdleNeedsNoQuiet: when the CLI itself says its turn is over
// (Codex's OSC 7501 state=idle or done, Gemini CLI's "Ready" title), the
// agent is idle at once, while a screen that merely stopped changing
// still waits out the quiet time. That quiet time was most of the time a
// message from or to these CLIs took.
func TestSaidIdleNeedsNoQuiet(t *testing.T) {
	for _, tc := range []struct {
		profile, working, idle, input string
	}{
		{"codex", "\x1b]7501;state=working:app=codex\x1b\\", "\x1b]7501;state=idle:app=codex\x1b\\", "› Ask Codex to do anything"},
		{"codex", "\x1b]7501;state=working:app=codex\x1b\\", "\x1b]7501;state=done:app=codex\x1b\\", "› Ask Codex to do anything"},
		{"gemini", "\x1b]2;✦  Working… (work)\x07", "\x1b]2;◇  Ready (work)\x07", "\x1b[?2004h > Type your message"},
	} {
		t.Run(tc.profile+" "+strings.TrimRight(tc.idle[strings.Index(tc.idle, ";")+1:], "\x07\x1b\\"), func(t *testing.T) {
			h := newHarness(t, 80, 24, tc.profile)
			// At start the report is not trusted: Gemini CLI says
			// "Ready" as it first draws its input box, is quiet, draws
			// it all again, and reads it only later; Codex reports a
			// working/idle pair as it starts.
			for _, frame := range []string{tc.working + tc.idle + tc.input, tc.idle + tc.input + " again"} {
				h.s.Write([]byte("\x1b[H" + frame))
				h.clk.advance(time.Millisecond)
				h.s.Tick()
				if st := h.s.State(); !st.Busy {
					t.Fatalf("at start, 1 ms after %q: %+v, want busy until quiet", frame, st)
				}
				h.settle()
			}
			h.clk.advance(3 * time.Second) // past Gemini CLI's StartQuiet
			h.s.Tick()
			if st := h.s.State(); st.Busy {
				t.Fatalf("quiet after the start: %+v, want idle", st)
			}
			h.write(tc.working + "\x1b[H• Working on it")
			if st := h.s.State(); !st.Busy {
				t.Fatalf("working: %+v, want busy", st)
			}
			// The last rows of the reply and the state report, in one write.
			h.s.Write([]byte("\x1b[2;1H• Done." + tc.idle))
			h.clk.advance(time.Millisecond)
			h.s.Tick()
			if st := h.s.State(); st.Busy {
				t.Fatalf("1 ms after the CLI said it is idle: %+v, want idle", st)
			}
		})
	}
	t.Run("no report", func(t *testing.T) {
		h := newHarness(t, 80, 24, "claude")
		h.write("\x1b[20;1H❯ \x1b[H● Working on it")
		h.s.Write([]byte("\x1b[2;1H● Done."))
		h.clk.advance(time.Millisecond)
		h.s.Tick()
		if st := h.s.State(); !st.Busy {
			t.Fatalf("1 ms after the last change, with no state report: %+v, want busy", st)
		}
		h.settle()
		if st := h.s.State(); st.Busy {
			t.Fatalf("quiet: %+v, want idle", st)
		}
	})
}

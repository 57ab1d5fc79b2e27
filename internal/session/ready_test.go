package session

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
)

// TestReadinessMet: when a shell's screen says it took the typed line and
// is ready for more.
func TestReadinessMet(t *testing.T) {
	typed := " # [relay] Message from agent Bob (id m1). To answer, write a line starting with @relay:Bob -- hello there"
	long := strings.Repeat("x", 150) + " end of a long line"
	cases := []struct {
		name   string
		last   string // the previous injection's line, "" for none
		before string // the screen before typing
		text   string // what was typed
		after  string // the screen after
		ready  bool
	}{
		{"prompt back", "", "$ ls\nfile\n$ \n\n", typed, "$ ls\nfile\n$ " + typed + "\n$ \n", true},
		{"echoed, prompt not back yet", "", "$ \n", typed, "$ " + typed + "\n", false},
		{"not echoed yet", "", "$ \n", typed, "$ \n", false},
		{"something else runs after it", "", "$ \n", typed, "$ " + typed + "\nrunning...\n", false},
		{"a long line the terminal wrapped", "", "bash-5.2$ \n", long, "bash-5.2$ " + long[:70] + "\n" + long[70:140] + "\n" + long[140:] + "\nbash-5.2$ \n", true},
		{"several lines: the last one counts", "", "$ \n", "# one\r# two", "$ # one\n$ # two\n$ \n", true},
		{"no prompt: a blank screen", "", "\n\n", typed, typed + "\n\n", true},
		{"no prompt: the last row is relay's last line", "# earlier line", "# earlier line\n", typed, "# earlier line\n" + typed + "\n", true},
		{"no prompt: the text echoed, not the Enter", "", "\n\n", typed, typed + "\n\n", false},
		{"no prompt: relay's last line wrapped", long, long[:70] + "\n" + long[70:140] + "\n" + long[140:] + "\n", typed, long[:70] + "\n" + long[70:140] + "\n" + long[140:] + "\n" + typed + "\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r readiness
			if tc.last != "" {
				r.expectFor("", 0, tc.last)
			}
			r.arm(r.expectFor(tc.before, 1, tc.text))
			// The last chunk of output ended with the echo of the Enter,
			// except where the case says that only the text was echoed.
			if strings.Contains(tc.name, "not the Enter") {
				r.took([]byte("text"))
			} else {
				r.took([]byte("text\r\n"))
			}
			if _, got := r.met(func() string { return tc.after }); got != tc.ready {
				t.Fatalf("ready = %v, want %v", got, tc.ready)
			}
			if _, again := r.met(func() string { return tc.after }); tc.ready && again {
				t.Fatalf("met twice: the watch must end once met")
			}
		})
	}
}

// TestShellReadyWhenPromptBack: in one-per-turn mode, a shell gets its next
// message as soon as it echoed the last one and its prompt is back, while
// its screen has not been quiet since (the scanner still says busy).
func TestShellReadyWhenPromptBack(t *testing.T) {
	r := startRig(t, Config{Delivery: delivery.ModeWait})
	r.scr.mu.Lock()
	r.scr.text = "$ \n"
	r.scr.mu.Unlock()
	r.screenBusy(false)
	r.s.inbox.queue.AddAll([]delivery.Item{{ID: "m1", Text: "# first"}, {ID: "m2", Text: "# second"}})
	r.waitTyped(t, "# first\r")
	r.screenBusy(true) // the echo moves the screen
	r.scr.mu.Lock()
	r.scr.text = "$ # first\n"
	r.scr.mu.Unlock()
	r.s.onOutput() // echoed, no prompt yet: not ready
	time.Sleep(50 * time.Millisecond)
	if strings.Contains(r.ty.String(), "second") {
		t.Fatalf("typed the second message before the prompt came back:\n%q", r.ty.String())
	}
	r.scr.mu.Lock()
	r.scr.text = "$ # first\n$ \n"
	r.scr.mu.Unlock()
	r.s.onOutput() // the prompt is back
	r.waitTyped(t, "# second\r")
}

// chunks is a Source that hands out its chunks in turn.
type chunks [][]byte

func (c *chunks) Next(context.Context) ([]byte, int64, error) {
	if len(*c) == 0 {
		return nil, 0, io.EOF
	}
	b := (*c)[0]
	*c = (*c)[1:]
	return b, 0, nil
}

// TestWatchedSourceTakenOnce: the readiness hears of a chunk when the
// scanner says it took it (before a flood window's wait), and not again
// at the next Next.
func TestWatchedSourceTakenOnce(t *testing.T) {
	var r readiness
	calls := 0
	w := &watchedSource{src: &chunks{[]byte("$ # typed\r\n"), []byte("$ ")}, r: &r, after: func() { calls++ }}
	if _, _, err := w.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatalf("%d calls before the chunk was taken", calls)
	}
	w.Taken()
	if calls != 1 {
		t.Fatalf("%d calls once the chunk was taken, want 1", calls)
	}
	w.Next(context.Background())
	if calls != 1 {
		t.Fatalf("%d calls after the next Next, want 1: the chunk was told already", calls)
	}
	w.Next(context.Background())
	if calls != 2 {
		t.Fatalf("%d calls, want 2: the second chunk is told at the next Next", calls)
	}
}

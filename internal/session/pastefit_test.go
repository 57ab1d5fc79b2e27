package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
)

func TestPasteFits(t *testing.T) {
	line := strings.Repeat("x", 150) // two rows at 100 columns
	many := func(n int) []string {
		texts := make([]string, n)
		for i := range texts {
			texts[i] = line
		}
		return texts
	}
	cases := []struct {
		name       string
		texts      []string
		cols, rows int
		want       bool
	}{
		{"14 lines of two rows on 30 rows", many(14), 100, 30, true},
		{"15 lines of two rows on 30 rows", many(15), 100, 30, false},
		{"a row filled exactly counts one more", []string{strings.Repeat("x", 100)}, 100, 3, false},
		{"a short line on a tiny screen", []string{"# hi"}, 100, 3, true},
		{"24 lines of two rows on 40 rows (issue 34's stall)", many(24), 120, 40, false},
		{"size not known", many(100), 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := pasteFits(tc.texts, tc.cols, tc.rows); got != tc.want {
				t.Fatalf("pasteFits = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestShellInjectionFitsItsScreen: a burst into a plain shell goes in as
// injections that each fit on the shell's screen, not as one paste taller
// than the screen, which bash's readline draws again over the wrong rows
// (the echo never shows above the prompt, and delivery falls back to
// waiting out the queue's Recheck for every injection). The burst is
// still batched: more than one message to an injection.
func TestShellInjectionFitsItsScreen(t *testing.T) {
	const cols, rows = 100, 30
	r := newRig(t, Config{})
	r.s.child.size = func() (int, int) { return cols, rows }
	r.start()
	r.scr.mu.Lock()
	r.scr.text = "$ \n"
	r.scr.mu.Unlock()
	r.screenBusy(false)
	items := make([]delivery.Item, 40)
	for i := range items {
		text := fmt.Sprintf("# [relay] message %02d %s", i, strings.Repeat("x", 150))
		items[i] = delivery.Item{ID: fmt.Sprintf("m%d", i), Text: text}
	}
	r.s.inbox.queue.AddAll(items)
	r.waitTyped(t, "message 00")
	var first string
	deadline := time.Now().Add(10 * time.Second)
	for first == "" {
		r.scr.mu.Lock()
		if len(r.scr.injected) > 0 {
			first = r.scr.injected[0]
		}
		r.scr.mu.Unlock()
		if first == "" && time.Now().After(deadline) {
			t.Fatal("no injection begun")
		}
		time.Sleep(time.Millisecond)
	}
	lines := strings.Split(first, "\r")
	used := 2 // the prompt's row and the cursor's after the last line
	for _, l := range lines {
		used += len(l)/cols + 1
	}
	if used > rows {
		t.Errorf("the first injection holds %d messages, %d rows with the prompt: taller than the %d-row screen", len(lines), used, rows)
	}
	if len(lines) < 2 {
		t.Errorf("the first injection holds %d message: a burst should still be batched", len(lines))
	}
}

package wrapper

import (
	"strings"
	"sync"
	"testing"
)

// TestLineTracker: each sequence of reads (one string per read of the
// keyboard) leaves the human's line unfinished or not.
func TestLineTracker(t *testing.T) {
	cases := []struct {
		name  string
		reads []string
		want  bool
	}{
		{"nothing", nil, false},
		{"typed", []string{"ls -l"}, true},
		{"typed then Enter", []string{"ls", "\r"}, false},
		{"typed then LF", []string{"ls\n"}, false},
		{"typed then Ctrl-C", []string{"ls", "\x03"}, false},
		{"typed then Ctrl-U", []string{"ls", "\x15"}, false},
		{"Enter then more", []string{"ls\rpw"}, true},
		{"utf-8 typed", []string{"é"}, true},
		{"backspaced to empty", []string{"ab", "\x7f", "\x7f"}, false},
		{"utf-8 backspaced to empty", []string{"éü", "\x7f\x7f"}, false},
		{"one backspace short", []string{"abc", "\x7f\x7f"}, true},
		{"backspace on empty line", []string{"\x7f\x7f", "a"}, true},
		{"Ctrl-H is no backspace", []string{"a", "\x08"}, true},
		{"up-arrow recalls history", []string{"\x1b[A"}, true},
		{"up-arrow in application mode", []string{"\x1bOA"}, true},
		{"arrow then backspaces cannot empty", []string{"a", "\x1b[D", "\x7f", "\x7f"}, true},
		{"Tab completes", []string{"\t"}, true},
		{"Ctrl-Y yanks", []string{"\x19"}, true},
		{"Ctrl-P recalls", []string{"\x10"}, true},
		{"Alt-. inserts last argument", []string{"\x1b."}, true},
		{"Alt-Enter is a newline, not a submit", []string{"a\x7f", "\x1b\r"}, true},
		{"Escape alone types nothing", []string{"\x1b"}, false},
		{"Escape twice types nothing", []string{"\x1b\x1b"}, false},
		{"Escape alone then backspaces cannot empty", []string{"ab", "\x1b", "\x7f\x7f"}, true},
		{"Escape then Enter", []string{"ab", "\x1b", "\r"}, false},
		{"paste", []string{"\x1b[200~hello\x1b[201~"}, true},
		{"line breaks in a paste do not submit", []string{"\x1b[200~a\rb\x03c\x15\x1b[201~"}, true},
		{"paste split across reads", []string{"\x1b[200~a\r", "b\x1b[2", "01~"}, true},
		{"Enter after a paste", []string{"\x1b[200~a\x1b[201~", "\r"}, false},
		{"focus in and out", []string{"\x1b[I", "\x1b[O"}, false},
		{"cursor position report", []string{"\x1b[12;40R"}, false},
		{"device attributes", []string{"\x1b[?62;22c", "\x1b[>1;10;0c"}, false},
		{"mode report", []string{"\x1b[?2026;2$y"}, false},
		{"OSC colour reply (BEL)", []string{"\x1b]11;rgb:0000/0000/0000\x07"}, false},
		{"OSC colour reply (ST)", []string{"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"}, false},
		{"reply keeps the draft", []string{"ab", "\x1b[I"}, true},
		{"F5", []string{"\x1b[15~"}, true},
		{"SGR mouse click", []string{"\x1b[<0;10;5M"}, true},
		{"Alt-] then keys", []string{"\x1b]", "hello"}, true},
		{"Alt-] then keys and Enter", []string{"\x1b]hello\r"}, false},
		{"cut sequence at the end of a read", []string{"\x1b["}, true},
		{"long CSI", []string{"\x1b[" + strings.Repeat("1;", 40) + "R"}, true},
		// Issue 30.5: Ctrl-U clears only left of the cursor.
		{"Ctrl-U with text right of the cursor", []string{"git push --force origin main", "\x1b[D\x1b[D\x1b[D\x1b[D", "\x15"}, true},
		{"Ctrl-U after Ctrl-B and application-mode Left", []string{"ab", "\x02", "\x1bOD", "\x15"}, true},
		{"Ctrl-U after Left, then Ctrl-K", []string{"abc", "\x1b[D", "\x15", "\x0b"}, false},
		{"Ctrl-U after Left and Right back to the end", []string{"abc", "\x1b[D", "\x1b[C", "\x15"}, false},
		{"Ctrl-U after Home", []string{"abc", "\x01", "\x15"}, true},
		{"Home then Delete three times", []string{"abc", "\x1b[H", "\x1b[3~\x1b[3~\x1b[3~"}, false},
		{"Home, End, Ctrl-U", []string{"abc", "\x1b[1~", "\x05", "\x15"}, false},
		{"backspace at the line's start removes nothing", []string{"ab", "\x01", "\x7f\x7f", "\x05"}, true},
		{"Ctrl-U on an inexact line leaves it unfinished", []string{"\x1b[A", "\x15"}, true},
		{"Ctrl-U after a word erase", []string{"ab cd", "\x17", "\x15"}, true},
		{"Right at the end accepts a suggestion", []string{"\x1b[C"}, true},
		{"End at the end accepts a suggestion", []string{"ab", "\x05", "\x15"}, true},
		{"Left on an empty line", []string{"\x1b[D"}, false},
		{"moves among wide characters", []string{"é", "\x1b[D", "\x15"}, true},
		{"Ctrl-U after typing wide characters", []string{"éü", "\x15"}, false},
		{"Ctrl-Left is a word move", []string{"ab", "\x1b[1;5D", "\x15"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tr lineTracker
			for _, r := range c.reads {
				tr.feed([]byte(r))
			}
			if tr.unfinished != c.want {
				t.Errorf("unfinished = %v after %q, want %v", tr.unfinished, c.reads, c.want)
			}
		})
	}
}

// TestLineTrackerChanged: feed reports each flip and only flips.
func TestLineTrackerChanged(t *testing.T) {
	var tr lineTracker
	steps := []struct {
		read    string
		changed bool
	}{
		{"a", true}, {"b", false}, {"\r", true}, {"\r", false}, {"\x1b[I", false}, {"x", true}, {"\x15", true},
	}
	for _, s := range steps {
		if got := tr.feed([]byte(s.read)); got != s.changed {
			t.Errorf("feed(%q) changed = %v, want %v", s.read, got, s.changed)
		}
	}
}

// FuzzLineTracker: whatever came before, a printable key leaves the line
// unfinished, and the end of a paste followed by Enter leaves it empty.
func FuzzLineTracker(f *testing.F) {
	for _, s := range []string{"", "ab\x7f", "\x1b[200~x", "\x1b]11;", "\x1b[12;4", "\x1bO", "\x1b", "\x1bP", "\x1b]x\x1b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		var tr lineTracker
		tr.feed(p)
		saved := tr
		saved.params = append([]byte(nil), tr.params...)
		if tr.feed([]byte("a")); !tr.unfinished {
			t.Fatalf("after %q then 'a': line empty", p)
		}
		tr = saved
		if tr.feed([]byte("\x1b[201~\r")); tr.unfinished {
			t.Fatalf("after %q then paste end and Enter: line unfinished", p)
		}
	})
}

// TestLineNotifier: a slow callback never holds up post, gets values one
// at a time that alternate, and ends with the newest.
func TestLineNotifier(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []bool
	entered := make(chan struct{}, 16)
	n := newLineNotifier(func(v bool) {
		entered <- struct{}{}
		<-release
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	}, nil)
	n.post(true)
	<-entered // the callback now blocks on release, with true
	for i := 0; i < 5; i++ {
		n.post(false)
		n.post(true)
	}
	n.post(false) // newest: false
	close(release)
	n.wait()
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[len(got)-1] != false {
		t.Fatalf("calls %v: want the last to be false", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("calls %v: the same value twice in a row", got)
		}
	}
	if got[0] != true {
		t.Fatalf("calls %v: want the first to be true", got)
	}
}

package session

import "testing"

// TestEchoWindowSlides: with three injections on their way, each but the
// latest counts as taken once the terminal echoed all its line ends, in
// whatever chunks they come; the latest waits for the exact sign (its
// echo and the prompt), and a new window starts afresh.
func TestEchoWindowSlides(t *testing.T) {
	var w echoWindow
	w.begin(1, "a\rb")  // 2 line ends with its Enter
	w.add(2, "c")       // 1
	w.add(3, "d\re\rf") // 3
	steps := []struct {
		chunk string
		want  uint64
	}{
		{"a\r\n", 0},
		{"b\r", 0},
		{"\nc", 1},
		{"\r\nd\r\ne\r\n", 2},
		{"f\r\n$ ", 0}, // the latest: not told by the count
	}
	for i, s := range steps {
		w.took([]byte(s.chunk))
		if got := w.take(); got != s.want {
			t.Fatalf("step %d (%q): reached %d, want %d", i, s.chunk, got, s.want)
		}
	}
	w.begin(4, "g")
	w.took([]byte("g\r\n"))
	if got := w.take(); got != 0 {
		t.Errorf("a window of one told %d; the exact sign is for it", got)
	}
	w.add(5, "h")
	w.took([]byte("h\r\n"))
	if got := w.take(); got != 4 {
		t.Errorf("after the second injection's echo: %d, want 4", got)
	}
}

func TestLineEnds(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{{"one", 1}, {"one\rtwo", 2}, {"one\ntwo\rthree", 3}} {
		if got := lineEnds(c.text); got != c.want {
			t.Errorf("lineEnds(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

package scanner

import (
	"fmt"
	"testing"
)

// TestInjectedLineIndex: a row that shows a whole typed line is known as
// typed through the line index, a part of one through the search, and
// both forget what fell out of the last maxInjected texts.
func TestInjectedLineIndex(t *testing.T) {
	s := New(Options{})
	s.MarkInjected("[relay] from Bob: first line of the body\r  second   line, spaced\n")
	cases := []struct {
		row  string
		want bool
	}{
		{"[relay] from Bob: first line of the body", true},
		{"> second line, spaced", true},        // a prompt glyph and folded spaces
		{"from Bob: first line", true},         // a part of a line: the search
		{"@relay:Carol something else", false}, // never typed
	}
	for _, c := range cases {
		if got := s.isInjected(c.row); got != c.want {
			t.Errorf("isInjected(%q) = %v, want %v", c.row, got, c.want)
		}
	}
	for i := range maxInjected {
		s.MarkInjected(fmt.Sprintf("[relay] later message number %d", i))
	}
	if s.isInjected("[relay] from Bob: first line of the body") {
		t.Error("a line typed more than maxInjected texts ago is still known")
	}
	if !s.isInjected(fmt.Sprintf("[relay] later message number %d", maxInjected-1)) {
		t.Error("the last typed line is not known")
	}
	if len(s.injLines) != maxInjected {
		t.Errorf("the index holds %d lines, want %d (the last %d texts' lines)", len(s.injLines), maxInjected, maxInjected)
	}
}

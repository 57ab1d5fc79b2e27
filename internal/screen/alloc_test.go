package screen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteDoesNotAllocate replays the Claude Code recordings into a
// screen that has seen them once: escape sequences, titles (a spinner
// cycles through them), scrolling and line insertion allocate nothing.
func TestWriteDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
	files, _ := filepath.Glob("../../testdata/recordings/claude-code-*/*-100x30.raw")
	if len(files) == 0 {
		t.Skip("no Claude Code recordings")
	}
	var data []byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, raw...)
	}
	s := New(100, 30)
	s.Write(data)
	if n := testing.AllocsPerRun(5, func() { s.Write(data) }); n != 0 {
		t.Errorf("writing %d bytes of Claude Code output: %v allocations, want 0", len(data), n)
	}
}

// TestTitleCycle checks the titles a TUI cycles through, more of them than
// recentTitle remembers, and that a short cycle costs no allocation.
func TestTitleCycle(t *testing.T) {
	s := New(20, 2)
	var got []string
	s2 := NewWithOptions(Options{Cols: 20, Rows: 2, OnTitle: func(t string) { got = append(got, t) }})
	for round := range 2 {
		for i := range recentTitles + 4 {
			want := fmt.Sprintf("%c title %d", "⠂⠐⠈"[i%3], i)
			seq := []byte("\x1b]0;" + want + "\x07")
			s.Write(seq)
			s2.Write(seq)
			if s.Title() != want {
				t.Fatalf("round %d: title %q, want %q", round, s.Title(), want)
			}
			if got[len(got)-1] != want {
				t.Fatalf("round %d: OnTitle got %q, want %q", round, got[len(got)-1], want)
			}
		}
	}
	spin := []byte("\x1b]0;⠂ Claude Code\x07\x1b]2;⠐ Claude Code\x07\x1b]0;✳ Claude Code\x07")
	s.Write(spin)
	if raceEnabled {
		return // allocations are not counted under the race detector
	}
	if n := testing.AllocsPerRun(10, func() { s.Write(spin) }); n != 0 {
		t.Errorf("cycling 3 titles: %v allocations, want 0", n)
	}
}

// TestScrollOffAllocations checks that rows scrolled off a plain terminal
// are built without an allocation each (their text and spans are cut from
// shared slabs) and that the Lines stay intact while later ones are built.
func TestScrollOffAllocations(t *testing.T) {
	var kept []Line
	s := NewWithOptions(Options{Cols: 80, Rows: 24, OnScrollOff: func(l Line) {
		if len(kept) < 5000 {
			kept = append(kept, l)
		}
	}})
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "line %d of the log, with some words after it\r\n", i)
	}
	text := []byte(sb.String())
	s.Write(text)
	n := testing.AllocsPerRun(3, func() { s.Write(text) })
	if n > 1000/20 && !raceEnabled {
		t.Errorf("1000 rows scrolled off: %v allocations, want at most one per 20 rows", n)
	}
	for i, l := range kept {
		if want := fmt.Sprintf("line %d of the log, with some words after it", i%1000); l.Text != want {
			t.Fatalf("row %d scrolled off as %q, want %q", i, l.Text, want)
		}
		if len(l.Spans) != 1 || l.Spans[0].End != len(l.Text) {
			t.Fatalf("row %d spans %+v", i, l.Spans)
		}
	}
}

package agents

import (
	"reflect"
	"testing"
)

// TestReadOptions: the last numbered list on screen, in a box or not, a
// label wrapped to the next row joined, shortcuts taken off the labels.
func TestReadOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rows  []string
		want  []DialogOption
		first int
	}{
		{name: "codex", rows: []string{"  $ touch x", "", "› 1. Yes, proceed (y)", "  2. Yes, and don't ask again for commands", "     that start with `touch x` (p)", "  3. No, and tell Codex what to do differently (esc)", "", "  Press enter"},
			want: []DialogOption{{1, "Yes, proceed", "y"}, {2, "Yes, and don't ask again for commands that start with `touch x`", "p"}, {3, "No, and tell Codex what to do differently", "esc"}}, first: 2},
		{name: "box", rows: []string{"│ Allow execution of [Shell]? │", "│                              │", "│ ● 1. Allow once              │", "│   2. No, suggest changes (esc) │", "╰──────────────────────────────╯"},
			want: []DialogOption{{1, "Allow once", ""}, {2, "No, suggest changes", "esc"}}, first: 2},
		{name: "the last list", rows: []string{"1. first", "2. second", "", "› 1. Yes (y)", "  2. No (esc)"},
			want: []DialogOption{{1, "Yes", "y"}, {2, "No", "esc"}}, first: 3},
		{name: "not from 1", rows: []string{"2. second", "3. third"}, first: -1},
		{name: "none", rows: []string{"plain text"}, first: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, first := ReadOptions(tc.rows)
			if first != tc.first || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ReadOptions = %+v, %d; want %+v, %d", got, first, tc.want, tc.first)
			}
		})
	}
	if k := (DialogOption{N: 1}).Keys(); string(k) != "1" {
		t.Errorf("keys of an option without shortcut: %q, want its number", k)
	}
	if k := (DialogOption{N: 3, Key: "esc"}).Keys(); string(k) != "\x1b" {
		t.Errorf("keys of (esc): %q, want Escape", k)
	}
}

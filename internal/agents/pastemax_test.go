package agents

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPasteMaxChunks(t *testing.T) {
	long := strings.Repeat("[relay] Alice: the build is green. ", 43) // 1,505 characters
	lines := strings.Repeat("│ a quoted line\n", 24)
	wide := strings.Repeat("é", 2500)
	for _, tc := range []struct {
		name string
		max  PasteMax
		text string
		want int // chunks
	}{
		{"no bound", PasteMax{}, long, 1},
		{"short", PasteMax{Chars: 1000, Lines: 10}, "hello", 1},
		{"exactly at the bound", PasteMax{Chars: 1000, Lines: 10}, strings.Repeat("x", 1000), 1},
		{"one over", PasteMax{Chars: 1000, Lines: 10}, strings.Repeat("x", 1001), 2},
		{"long", PasteMax{Chars: 1000, Lines: 10}, long, 2},
		{"many lines", PasteMax{Chars: 1000, Lines: 10}, lines, 3},
		{"characters, not bytes", PasteMax{Chars: 1000, Lines: 10}, wide, 3},
		{"empty", PasteMax{Chars: 1000, Lines: 10}, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.max.Chunks(tc.text)
			if len(got) != tc.want {
				t.Errorf("%d chunks, want %d", len(got), tc.want)
			}
			if j := strings.Join(got, ""); j != tc.text {
				t.Errorf("joined chunks differ from the text:\n%q\n%q", j, tc.text)
			}
			for i, c := range got {
				if !utf8.ValidString(c) {
					t.Errorf("chunk %d splits a character", i)
				}
				if n := utf8.RuneCountInString(c); tc.max.Chars > 0 && n > tc.max.Chars {
					t.Errorf("chunk %d holds %d characters, over %d", i, n, tc.max.Chars)
				}
				if n := strings.Count(c, "\n") + 1; tc.max.Lines > 0 && n > tc.max.Lines {
					t.Errorf("chunk %d holds %d lines, over %d", i, n, tc.max.Lines)
				}
			}
		})
	}
}

func FuzzPasteMaxChunks(f *testing.F) {
	f.Add("hello\nworld", 3, 2)
	f.Add(strings.Repeat("é\n", 30), 7, 4)
	f.Fuzz(func(t *testing.T, text string, chars, lines int) {
		m := PasteMax{Chars: chars % 2000, Lines: lines % 50}
		if m.Lines == 1 {
			m.Lines = 2 // a line break makes two
		}
		got := m.Chunks(text)
		if strings.Join(got, "") != text {
			t.Fatalf("joined chunks differ from %q", text)
		}
		for _, c := range got {
			if m.Chars > 0 && utf8.RuneCountInString(c) > m.Chars {
				t.Fatalf("chunk %q over %d characters", c, m.Chars)
			}
			if m.Lines > 0 && strings.Count(c, "\n")+1 > m.Lines {
				t.Fatalf("chunk %q over %d lines", c, m.Lines)
			}
		}
	})
}

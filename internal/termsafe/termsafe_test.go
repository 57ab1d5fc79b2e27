package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextAndLine(t *testing.T) {
	cases := []struct {
		name, in, text, line string
	}{
		{"plain", "run the tests", "run the tests", "run the tests"},
		{"unicode", "naïve café ⏎ 日本", "naïve café ⏎ 日本", "naïve café ⏎ 日本"},
		{"osc 52", "x \x1b]52;c;ZWNobw==\x07 end", `x \x1b]52;c;ZWNobw==\x07 end`, `x \x1b]52;c;ZWNobw==\x07 end`},
		{"clear screen", "\x1b[2J", `\x1b[2J`, `\x1b[2J`},
		{"newline and tab", "a\n\tb", "a\n\tb", `a\n\tb`},
		{"carriage return", "ok\rFAIL", `ok\rFAIL`, `ok\rFAIL`},
		{"del", "a\x7fb", `a\x7fb`, `a\x7fb`},
		{"nul", "a\x00b", `a\x00b`, `a\x00b`},
		{"c1 csi", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"raw c1 byte", "a\x9b2Jb", `a\x9b2Jb`, `a\x9b2Jb`},
		{"invalid utf-8", "a\xff\xfeb", `a\xff\xfeb`, `a\xff\xfeb`},
		{"cut rune", "é"[:1] + "z", `\xc3z`, `\xc3z`},
		{"bidi override", "abc\u202edef", `abc\u202edef`, `abc\u202edef`},
		{"backslash stays", `C:\x1b`, `C:\x1b`, `C:\x1b`},
		{"empty", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.text {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
			}
			if got := Line(c.in); got != c.line {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
			}
		})
	}
}

func TestSafeTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("plain text, ünïcode ", 50)
	if n := testing.AllocsPerRun(100, func() { _ = Text(s); _ = Line(s) }); n != 0 {
		t.Errorf("safe text: %v allocations, want 0", n)
	}
}

func TestLines(t *testing.T) {
	got := Lines("a\x1b", "b\tc")
	if got[0] != `a\x1b` || got[1] != `b\tc` {
		t.Errorf("Lines = %q", got)
	}
}

// checkSafe fails when out holds anything a terminal would obey.
func checkSafe(t *testing.T, in, out string, keep bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%q -> %q: invalid UTF-8", in, out)
	}
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c == 0x7f || (c < 0x20 && !(keep && (c == '\n' || c == '\t'))) {
			t.Fatalf("%q -> %q: byte %#x at %d", in, out, c, i)
		}
	}
	for _, r := range out {
		if r >= 0x80 && r <= 0x9f {
			t.Fatalf("%q -> %q: C1 control %U", in, out, r)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]52;c;eA==\x07", "a\nb\tc\r", "\xc2\x9b2J", "\xff\xfe", "é"[:1], "\u202e", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, line := Text(s), Line(s)
		checkSafe(t, s, text, true)
		checkSafe(t, s, line, false)
		if strings.ContainsAny(line, "\n\t") {
			t.Fatalf("Line(%q) = %q keeps a newline or tab", s, line)
		}
		if Text(text) != text || Line(line) != line {
			t.Fatalf("not idempotent on %q", s)
		}
		if firstUnsafe(s, true) == len(s) && text != s {
			t.Fatalf("Text changed safe text %q to %q", s, text)
		}
	})
}

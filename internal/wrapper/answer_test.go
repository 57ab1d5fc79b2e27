package wrapper

import (
	"testing"
)

func TestAnswerer(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"cursor position", "\x1b[6n", "\x1b[3;5R"},
		{"private cursor position", "\x1b[?6n", "\x1b[?3;5;1R"},
		{"device attributes", "\x1b[c", "\x1b[?62;22c"},
		{"device attributes 0", "\x1b[0c", "\x1b[?62;22c"},
		{"secondary attributes", "\x1b[>c", "\x1b[>1;10;0c"},
		{"status", "\x1b[5n", "\x1b[0n"},
		{"background colour, BEL", "\x1b]11;?\x07", "\x1b]11;rgb:0000/0000/0000\x1b\\"},
		{"foreground colour, ST", "\x1b]10;?\x1b\\", "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"},
		{"two queries amid text", "hello\x1b[6nworld\x1b[c", "\x1b[3;5R\x1b[?62;22c"},
		{"no queries", "\x1b[2J\x1b[1;1Hplain \x1b[31mred\x1b[0m", ""},
		{"title is no query", "\x1b]0;✳ Claude Code\x07", ""},
		{"kitty keyboard query unanswered", "\x1b[?u", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cursor := func() (int, int) { return 4, 2 }
			whole := (&answerer{cursor: cursor}).scan([]byte(tc.in))
			if string(whole) != tc.want {
				t.Errorf("scan(%q) = %q, want %q", tc.in, whole, tc.want)
			}
			// The same bytes one at a time: queries split across reads.
			a := &answerer{cursor: cursor}
			var split []byte
			for i := 0; i < len(tc.in); i++ {
				split = append(split, a.scan([]byte{tc.in[i]})...)
			}
			if string(split) != tc.want {
				t.Errorf("byte by byte: %q, want %q", split, tc.want)
			}
		})
	}
}

func FuzzAnswerer(f *testing.F) {
	for _, s := range []string{"\x1b[6n", "\x1b]11;?\x07", "\x1b[>c", "abc\x1b[", "\x1b]" + string(make([]byte, 100))} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		a := &answerer{}
		out := a.scan(p)
		if len(out) > 32*(len(p)+1) {
			t.Fatalf("%d bytes of answers for %d bytes of input", len(out), len(p))
		}
		if len(a.params) > maxQueryParams {
			t.Fatalf("params grew to %d", len(a.params))
		}
		// Text is skipped in jumps to the next escape: the answers are
		// those of reading the same bytes one at a time.
		b := &answerer{}
		var one []byte
		for i := range p {
			one = append(one, b.scan(p[i:i+1])...)
		}
		if string(one) != string(out) {
			t.Fatalf("whole chunk answers %q, byte by byte %q", out, one)
		}
	})
}

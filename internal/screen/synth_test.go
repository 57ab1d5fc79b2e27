package screen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// synthCase is a byte stream of our own that exercises a hard case; its
// golden capture comes from tmux like the recordings'.
type synthCase struct {
	name       string
	cols, rows int
	data       string
}

// synthCases are the hand-written streams, plus random operation soups.
func synthCases() []synthCase {
	cs := []synthCase{
		{"wrap-pending", 10, 8, "0123456789A\r\n" +
			"0123456789\r\nB\r\n" +
			"0123456789\x1b[DC\r\n" +
			"0123456789\x1b[CD\r\n" +
			"0123456789\bE\r\n" +
			"0123456789\nF"},
		{"wrap-lf-at-pending", 10, 6, "0123456789\n\rX\r\n0123456789\x1b[1;1H"},
		{"wide-last-column", 10, 6, "012345678中X\r\n中文字符串测试字\r\n\x1b[5;10H中"},
		{"wide-overwrite", 12, 6, "中文中文\x1b[1;2HX\r\n中文中文\x1b[2;1HY\r\n中文中文\x1b[3;3H\x1b[1P\r\n" +
			"中文中文\x1b[4;2H\x1b[2@\r\n中文中文\x1b[5;2H\x1b[K\r\n中文中文\x1b[6;4H\x1b[1K"},
		{"emoji", 20, 6, "😀 ok\r\n👍🏽 x\r\n✅ ❤️ y\r\n🇫🇷 z\r\n⚡☕ w\r\nab😀😀😀😀😀😀😀😀😀"},
		{"combining", 12, 6, "e\u0301 a\u0308b\r\n\u0301start\r\n中\u0301x\r\n0123456789ab\u0301\r\nq\u200bz\u200dy\ufe0fw"},
		{"scroll-region", 10, 8, "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\x1b[3;6r\x1b[6;1Ha\nb\nc\x1b[3;1H\x1bMd\x1bMe" +
			"\x1b[2S\x1b[1T\x1b[4;1H\x1b[2L\x1b[5;1H\x1b[1M\x1b[8;1H\x1b[1L\x1b[1;1H\x1b[1M\x1b[r\x1b[8;1Hz\ny"},
		{"scroll-region-origin", 10, 8, "\x1b[3;6r\x1b[?6h\x1b[1;1Hx\x1b[10;1Hy\x1b[?6l\x1b[1;1Hz\x1b[r"},
		{"index-nel", 10, 4, "a\x1bDb\x1bEc\x1bDd\x1bDe\x1bEf\x1bM\x1bM\x1bM\x1bMg"},
		{"alt-screen-1049", 12, 5, "main1\r\nmain2\x1b[?1049halt1\r\nalt2\x1b[?1049lX"},
		{"alt-screen-47", 12, 5, "main1\r\nmain2\x1b[?47halt1\r\nalt2\x1b[?47lX"},
		{"alt-screen-1047", 12, 5, "main1\r\nmain2\x1b[?1047halt\x1b[?1047lX\x1b[?1049h\x1b[?1049h\x1b[2;2Hin"},
		{"alt-screen-stay", 12, 5, "main\x1b[?1049h\x1b[2J\x1b[Halt one\r\nalt two"},
		{"erase", 10, 8, "aaaaaaaaaa\r\nbbbbbbbbbb\r\ncccccccccc\r\ndddddddddd\r\neeeeeeeeee\r\nffffffffff\r\ngggggggggg\r\nhhhhhhhhhh" +
			"\x1b[2;5H\x1b[K\x1b[3;5H\x1b[1K\x1b[4;5H\x1b[2K\x1b[5;5H\x1b[3X\x1b[6;5H\x1b[1J\x1b[7;5H\x1b[J\x1b[1;3H\x1b[0K"},
		{"erase-pending", 10, 4, "0123456789\x1b[K\r\n0123456789\x1b[1K\r\n0123456789\x1b[X\r\n0123456789\x1b[J"},
		{"erase-all", 10, 4, "abc\r\ndef\x1b[2Jx\x1b[3J"},
		{"ich-dch", 10, 5, "0123456789\x1b[1;3H\x1b[2@\r\n0123456789\x1b[2;3H\x1b[2P\r\n0123456789\x1b[3;3H\x1b[20P\r\n" +
			"0123456789\x1b[4;9H\x1b[5@\r\n0123456789\x1b[5;3H\x1b[4h XY\x1b[4l"},
		{"insert-delete-lines", 10, 6, "1\r\n2\r\n3\r\n4\r\n5\r\n6\x1b[2;1H\x1b[2L\x1b[5;1H\x1b[M\x1b[1;1H\x1b[9M"},
		{"tabs", 30, 6, "a\tb\tc\td\r\n\t\t\t\t\tx\r\nab\x1bH\x1b[1;1H\x1b[3g\tY\r\n\x1b[3g\x1bH\t\tZ\x1b[4;1H0123\x1b[1Z1\x1b[2I2\r\n0123456789012345678901234567\t\tQ"},
		{"cursor-moves", 10, 8, "\x1b[5;5HA\x1b[2AB\x1b[3BC\x1b[2CD\x1b[4DE\x1b[0AF\x1b[99AG\x1b[99BH\x1b[99CI\x1b[99DJ" +
			"\x1b[3GK\x1b[0GL\x1b[99GM\x1b[4dN\x1b[0dO\x1b[99dP\x1b[2EQ\x1b[3FR\x1b[0;0HS\x1b[99;99HT\x1b[3`U"},
		{"save-restore", 10, 5, "ab\x1b7\x1b[3;3Hcd\x1b8X\x1b[4;4H\x1b[s\x1b[1;8Hef\x1b[uY\x1b[?1049h\x1b8Z\x1b[?1049l"},
		{"autowrap-off", 10, 4, "\x1b[?7l0123456789ABC\r\n中文字符串测试\r\n012345678中\x1b[?7h\r\n0123456789DE"},
		{"strings-hidden", 20, 6, "a\x1b]0;✳ Claude Code\x07b\x1b]2;title\x1b\\c\x1b]7501;state=working:app=codex\x1b\\d" +
			"\x1bPq#0;2;0;0;0#1;2;100;100;0\x1b\\e\x1b_apc data\x1b\\f\x1b^pm\x1b\\g\x1bXsos\x1b\\h\x1bkname\x1b\\i\x1b]8;;http://x\x07link\x1b]8;;\x07j"},
		// CAN and SUB end a string; tmux agrees except inside DCS data
		// (there tmux 3.3a reads them as data: see strings_test.go).
		{"strings-cancelled", 30, 3, "a\x1b]0;t\x18b\x1b]2;u\x1ac\x1b_x\x1ad\x1b^p\x18e\x1bXs\x1af\x1bkn\x18g\x1bP1;2\x18h\x1bP\x1a\x1b\\i"},
		{"osc-c1-inside", 20, 3, "\x1b]0;\xe2\x9c\xb3 Claude\x9c Code\x07ok\r\nline2\x1b]0;x\x9cy\x1b\\z"},
		{"invalid-utf8", 20, 6, "a\x80b\xc0\xafc\xe2\x82d\r\n\xe2\x9c\x1b[me\r\n\xff\xfe\xf5f\r\n\xed\xa0\x80g\xf4\x90\x80\x80h\r\n\xe2A\x9c\xb3i"},
		{"controls", 10, 4, "a\x00b\x07c\x7fd\x0ee\x0ff\x05g\x1b[1;\nh"},
		{"rep", 10, 4, "ab\x1b[3bc\x1b[20b\r\n\x1b[5b"},
		{"dec-graphics", 20, 4, "\x1b(0lqqk\x1b(B x\r\n\x1b)0\x0elqk\x0f y\r\n\x1b(0x\x1b7\x1b(B\x1b8x"},
		{"backspace-wrapped", 10, 4, "0123456789ab\b\b\bX\r\n\bY"},
		{"ris", 10, 4, "junk\x1b[2;3r\x1b[?7l\x1bcA\r\n0123456789B"},
		{"decaln", 6, 3, "\x1b#8\x1b[2;2Hx"},
		{"many-lines", 20, 5, manyLines(40)},
		{"long-line-scroll", 8, 4, strings.Repeat("abcdefghij", 6) + "\r\nend"},
		{"scroll-su-sd", 10, 5, "1\r\n2\r\n3\r\n4\r\n5\x1b[2S\x1b[3;1Hx\x1b[T\x1b[99S\x1b[1;1Hy\x1b[99T"},
		{"params-odd", 10, 4, "\x1b[;5Ha\x1b[2;Hb\x1b[1;2;3Hc\x1b[99999999999Hd\x1b[?25l\x1b[>0q\x1b[=1;2m\x1b[ qe"},
		{"sgr-then-text", 20, 3, "\x1b[1;31mred\x1b[0m \x1b[38;5;153mcode\x1b[39m \x1b[38:2::1:2:3mrgb\x1b[m \x1b[7mrev\x1b[27m"},
		{"region-bottom-lf", 10, 6, "top\x1b[2;4r\x1b[4;1Ha\nb\nc\x1b[6;1Hq\nr\ns"},
		{"cup-after-wide", 10, 3, "中中中中中\x1b[1;10Hx\x1b[2;1H\x1b[1;3Hyy"},
		{"wide-overwrite-nonascii", 12, 6, "中文中文\x1b[1;2H═\r\n中文中文\x1b[2;4H═\r\n中文中文\x1b[3;4H中\r\n中文中文\x1b[4;1H═\r\nab中文\x1b[5;4Hé"},
		{"combine-blank", 10, 3, "\x1b[1;3H\u0301x\r\na\u200d中\u0301b"},
		{"zwj-wide", 10, 3, "a\u200d中\x1b[1;5HX\r\n👍\u200d😀\x1b[2;6HY\r\nb\u200d═\x1b[3;6HZ"},
		{"il-outside-region", 10, 8, "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n8\x1b[2;4r\x1b[6;1H\x1b[2L\x1b[1;1H\x1b[L\x1b[7;1H\x1b[M\x1b[r"},
	}
	// Where a backspace at the start of a row goes tells whether tmux
	// considers the row above soft-wrapped.
	for _, w := range []struct{ name, op string }{
		{"none", ""}, {"el2", "\x1b[1;1H\x1b[2K"}, {"el0", "\x1b[1;1H\x1b[K"}, {"el0-mid", "\x1b[1;3H\x1b[K"},
		{"el1", "\x1b[1;5H\x1b[1K"}, {"ed2", "\x1b[2J"}, {"ed0", "\x1b[1;1H\x1b[J"}, {"ed1", "\x1b[1;5H\x1b[1J"},
		{"lf", "\x1b[1;1H\n"}, {"print", "\x1b[1;1Hxx"}, {"ech", "\x1b[1;1H\x1b[5X"}, {"dch", "\x1b[1;1H\x1b[5P"},
		{"ich", "\x1b[1;1H\x1b[2@"}, {"su", "\x1b[S\x1b[2;1H"}, {"sd", "\x1b[T"}, {"il", "\x1b[1;1H\x1b[L"},
		{"dl", "\x1b[1;1H\x1b[M"}, {"ri", "\x1b[1;1H\x1bM"}, {"crlf-on-row", "\x1b[1;5H\r\n"}, {"alt", "\x1b[?1049h\x1b[?1049l"},
	} {
		cs = append(cs, synthCase{"wrapflag-" + w.name, 5, 5, "abcdefghijk" + w.op + "\x1b[2;1H\bZ\x1b[3;1H\bY"})
	}
	cs = append(cs, synthCase{"il-dl-column", 10, 6, "abc\x1b[2;3H\x1b[LX\x1b[4;5H\x1b[MY\x1b[2;4r\x1b[3;6H\x1b[LZ\x1b[3;7H\x1b[MW\x1b[6;3H\x1b[LV\x1b[r"})
	cs = append(cs, synthCase{"utf8-across-controls", 10, 8, "\xe2\x9c\r\xb3X\r\n\xe2\x9c\x1b[m\xb3X\r\n\xe2\x9c\x1b]0;t\x07\xb3X\r\n\xe2\x9c\x1b[1C\xb3X\r\n\xe2\x9c\n\xb3X\r\n\xe2\x9c\x07\xb3X"})
	cs = append(cs, synthCase{"ris-in-alt", 10, 4, "main\x1b[?1049halt\x1bcX\x1b[?2004h\x1b[?1049lY"})
	cs = append(cs, synthCase{"origin-home", 10, 8, "\x1b[3;6r\x1b[?6hA\x1b[?6lB\x1b[?6h\x1b[5;3HC\x1b[9;3HD\x1b[2;5HE\x1b[2;5rF\x1b[?6l\x1b[r"})
	cs = append(cs, synthCase{"decstbm-equal", 10, 5, "abc\r\ndef\x1b[2;2rX\x1b[3;1r\nY"})
	for seed := uint64(1); seed <= 8; seed++ {
		cs = append(cs, soup(seed))
	}
	return cs
}

func manyLines(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "line %d of the log\r\n", i)
	}
	return sb.String()
}

// soup returns a random stream of the operations the model implements,
// seeded so that its golden file stays valid.
func soup(seed uint64) synthCase {
	rng := rand.New(rand.NewPCG(seed, 42))
	cols, rows := 8+rng.IntN(30), 3+rng.IntN(12)
	texts := []string{"hello", "wörld", "中文", "😀", "e\u0301", "ab cd", "x", "—", "│", "    ", "✳", "❯ ", "中", "\ufe0f", "\xe2\x9c", "\xb3"}
	ops := []func() string{
		func() string { return texts[rng.IntN(len(texts))] },
		func() string { return strings.Repeat("#", rng.IntN(2*cols)) },
		func() string { return "\r\n" },
		func() string { return "\n" },
		func() string { return "\r" },
		func() string { return "\t" },
		func() string { return "\b" },
		func() string { return fmt.Sprintf("\x1b[%d;%dH", rng.IntN(rows+2), rng.IntN(cols+2)) },
		func() string { return fmt.Sprintf("\x1b[%d%c", rng.IntN(5), "ABCDEFGd`"[rng.IntN(9)]) },
		func() string { return fmt.Sprintf("\x1b[%dJ", rng.IntN(3)) },
		func() string { return fmt.Sprintf("\x1b[%dK", rng.IntN(3)) },
		func() string { return fmt.Sprintf("\x1b[%d%c", rng.IntN(4), "@PXLMST"[rng.IntN(7)]) },
		func() string {
			a := 1 + rng.IntN(rows)
			return fmt.Sprintf("\x1b[%d;%dr", a, a+rng.IntN(rows))
		},
		func() string { return "\x1b[r" },
		func() string {
			return []string{"\x1bD", "\x1bM", "\x1bE", "\x1b7", "\x1b8", "\x1b[s", "\x1b[u"}[rng.IntN(7)]
		},
		func() string { return []string{"\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?47l"}[rng.IntN(4)] },
		func() string { return []string{"\x1b[?7l", "\x1b[?7h", "\x1b[4h", "\x1b[4l"}[rng.IntN(4)] },
		func() string { return fmt.Sprintf("\x1b[%d;%dm", rng.IntN(50), rng.IntN(50)) },
		func() string { return "\x1b]0;tïtle\x07" },
		func() string { return fmt.Sprintf("\x1b[%dX", rng.IntN(cols+2)) },
		func() string { return fmt.Sprintf("\x1b[%db", rng.IntN(4)) },
		func() string { return []string{"\x1bH", "\x1b[g", "\x1b[3g", "\x1b[Z", "\x1b[2Z"}[rng.IntN(5)] },
		func() string { return "\x1b[?1049h\x1b[2J\x1b[H" },
		func() string {
			return []string{"\x1b[?6h", "\x1b[?6l", "\x1b#8", "\x1b[3J", "\x1b[?1047h", "\x1b[?1047l"}[rng.IntN(6)]
		},
	}
	var sb strings.Builder
	for range 300 {
		sb.WriteString(ops[rng.IntN(len(ops))]())
	}
	sb.WriteString("\x1b[r\x1b[?7h\x1b[4l")
	return synthCase{fmt.Sprintf("soup-%d", seed), cols, rows, sb.String()}
}

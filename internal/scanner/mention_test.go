package scanner

import (
	"testing"

	"github.com/relayhq/relay/internal/patterns"
)

func TestMayMention(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"● @relay:Bob please review", true},
		{"  @deploy:staging v1.2.3", true},
		{`\@relay:Nobody escaped`, true},
		{"tell @memory-2_x:save it", true},
		{"the row ends in @rel", true},
		{"@", true},
		{"user@host:/srv is conservative", true},
		{" >   Type your message or @path/to/file", false},
		{"mail a@b.com or @ once", false},
		{"@: nothing", false},
		{"@1abc: no letter first", false},
		{"@@ and @ twice", false},
		{"", false},
		{"no at sign", false},
	} {
		if got := mayMention(tc.text); got != tc.want {
			t.Errorf("mayMention(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestMayMentionBytes(t *testing.T) {
	for _, tc := range []struct {
		p    string
		want bool
	}{
		{"● @relay:Bob", true},
		{"@rel", true},                          // the next write may go on
		{"@relay\x1b[0m:Bob", true},             // a colour between
		{"@relay\r\n", true},                    // a control byte
		{"\x1b[2m@path/to/file\x1b[22m", false}, // Gemini CLI's placeholder
		{"Type your message or @path/to/file", false},
		{"a@b.com", false},
		{"no at sign", false},
	} {
		if got := mayMentionBytes([]byte(tc.p)); got != tc.want {
			t.Errorf("mayMentionBytes(%q) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestRedrawInPlace(t *testing.T) {
	for _, tc := range []struct {
		p    string
		want bool
	}{
		{"\x1b[4A\x1b[4G\x1b[2K frame", true}, // Gemini CLI (Ink)
		{"\x1b[2K\x1b[1A\x1b[2K", true},
		{"\x1b[A", true},
		{"\x1b[10;1H row", true},
		{"\x1b[5d", true},
		{"\x1bM", true},
		{"\x1b[2Kdone", false},
		{"\x1b[31mred\x1b[0m", false},
		{"\x1b[", false},
		{"\x1b", false},
		{"plain", false},
		{"", false},
	} {
		if got := redrawInPlace([]byte(tc.p)); got != tc.want {
			t.Errorf("redrawInPlace(%q) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

// FuzzMayMention: a line on which the grammar finds a command (or an
// escaped one) is one mayMention and mayMentionBytes say may hold one;
// they may say so of more, never of less.
func FuzzMayMention(f *testing.F) {
	for _, s := range []string{"@relay:Bob hi", "● @deploy:staging v1", `\@relay:X y`, "a@b.c", "@path/to/file", "  @memory:save x"} {
		f.Add(s)
	}
	ns, err := patterns.NewNamespaces("deploy")
	if err != nil {
		f.Fatal(err)
	}
	ex := patterns.New(patterns.Options{Namespaces: ns, Mode: patterns.Screen})
	f.Fuzz(func(t *testing.T, line string) {
		if len(ex.Extract([]patterns.Line{{Text: line}})) == 0 {
			return
		}
		if !mayMention(line) {
			t.Errorf("a command on %q, and mayMention says none may start there", line)
		}
		if !mayMentionBytes([]byte(line)) {
			t.Errorf("a command on %q, and mayMentionBytes says none may start there", line)
		}
	})
}

package patterns

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"@relay:Bob hi",
		"● @relay:Bob <<<\n  a\n  b\n>>>\n",
		"```\n@relay:X y\n```\n@broadcast: z",
		"\\@relay:Nobody x\n\\\\@relay:N y",
		"@memory:save a\r\nb\r\n\r\n@relay:<name> hi",
		"@relay:Bob caf\xe9",
		"~~~\n@relay:A b\n~~~~\n@relay:C d",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	ns, _ := NewNamespaces("deploy")
	f.Fuzz(func(t *testing.T, s string, screen bool) {
		mode := Markdown
		if screen {
			mode = Screen
		}
		lines := SplitLines(s)
		for i := range lines {
			lines[i].Code = i%7 == 3
		}
		cmds := New(Options{Namespaces: ns, Mode: mode}).Extract(lines)
		last := -1
		for _, c := range cmds {
			if c.Line <= last || c.End <= c.Line || c.End > len(lines) {
				t.Fatalf("bad positions %+v after line %d of %d", c, last, len(lines))
			}
			last = c.End - 1
			if !utf8.ValidString(c.Body) || !utf8.ValidString(c.Target) {
				t.Fatalf("invalid UTF-8 out: %+v", c)
			}
			if len(c.Body) > MaxBodyBytes || strings.Count(c.Body, "\n") >= MaxBodyLines {
				t.Fatalf("body over the caps: %d bytes", len(c.Body))
			}
			if !ns.Has(c.NS) {
				t.Fatalf("unregistered namespace fired: %q", c.NS)
			}
		}
	})
}

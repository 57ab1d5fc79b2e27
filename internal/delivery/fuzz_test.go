package delivery

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFormattedNeverFires: for any body and sender, what delivery types
// (Message and Notice, model and shell forms, the one-line form, with and
// without the mention escape, cut or not) never yields a command when the
// scanner reads it, in markdown or screen mode; and a shell line always
// fits the terminal's line limit.
func FuzzFormattedNeverFires(f *testing.F) {
	for _, l := range hostileLines {
		f.Add("Alice", l)
		f.Add("- @relay:C x", "intro\n"+l)
	}
	f.Add("Bob", strings.Repeat("y\n", 1790))
	f.Add("\u3000@relay:C", "> @memory:save x\r\n│ @relay:C x\r* @deploy:prod x")
	f.Fuzz(func(t *testing.T, from, body string) {
		for _, text := range formatted(from, "m-1", body) {
			if !utf8.ValidString(text) {
				t.Fatalf("invalid UTF-8 typed: %q", text)
			}
			if cmds := commandsIn(text); len(cmds) > 0 {
				t.Fatalf("from %q body %q typed as %q fires %+v", from, body, text, cmds[0])
			}
		}
		for _, form := range forms {
			if !form.Shell {
				continue
			}
			for _, line := range []string{form.Message(from, "m-1", body), form.Notice(body)} {
				if len(line) > form.Limit() || strings.ContainsAny(line, "\r\n") {
					t.Fatalf("shell line of %d bytes (limit %d): %q", len(line), form.Limit(), line)
				}
			}
		}
	})
}

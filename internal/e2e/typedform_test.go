package e2e

import (
	"net/url"
	"regexp"
	"strings"
)

// What relay types into a plain shell (delivery.Form.Shell), read back in
// one place: a comment line " # [relay] HEADER -- TEXT" whose text has every
// byte outside a safe set of ASCII written %XX (delivery.ShellText). Tests
// that look for a plain-word body on a shell's screen find it as it is;
// tests that need the text exactly decode it with shellText.

// messageRE matches the header of a message typed into a shell: the
// sender, the id, and the text after it (several may share a line of a
// recording when the echo interleaves).
var messageRE = regexp.MustCompile(`(?:^|  ) # \[relay\] Message from agent (\w+) \(id (\S+)\)\. To answer, write a line starting with @relay:\w+ -- `)

// shellText decodes the text of a shell line (its %XX escapes); a cut
// note after it is left as it is.
func shellText(s string) string {
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// shellBody returns the decoded text of a message line typed into a shell
// (what follows relay's header), or false when l holds none.
func shellBody(l string) (string, bool) {
	i := strings.Index(l, " # [relay] Message ")
	if i < 0 {
		return "", false
	}
	_, body, ok := strings.Cut(l[i:], " -- ")
	return shellText(body), ok
}

// quoted is a peer's text as a model CLI reads it in relay's paste: every
// line starts with "│ " (delivery.Form), so that none reads like relay's
// header.
func quoted(s string) string { return "│ " + strings.ReplaceAll(s, "\n", "\n│ ") }

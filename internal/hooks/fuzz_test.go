package hooks

import (
	"strings"
	"testing"
)

// FuzzReadStdout feeds arbitrary stdout to the result parser: it never
// panics, and output that is not a JSON object comes back as the text to
// inject (less trailing newlines).
func FuzzReadStdout(f *testing.F) {
	for _, s := range []string{"", "Deployed to staging\n", `{"inject":"x","stop":true}`, `{"decision":"block","reason":"r"}`,
		`{"status":"ok"}`, `{"inject":`, `{"message":null}`, `{"hookSpecificOutput":{"additionalContext":"c"}}`, "[1,2]", "\xff{"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c capped
		c.Write(data)
		var out Outcome
		readStdout(&out, &c)
		text := c.String()
		if !strings.HasPrefix(strings.TrimSpace(text), "{") && out.Inject != strings.TrimRight(text, "\n") {
			t.Fatalf("text %q came back as %q", text, out.Inject)
		}
		if out.Block && out.Inject != "" && !strings.HasPrefix(strings.TrimSpace(text), "{") {
			t.Fatalf("plain text blocked: %q", text)
		}
	})
}

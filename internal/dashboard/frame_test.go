package dashboard

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/relayhq/relay/bus"
)

// FuzzCutBody checks that a message frame's body is a prefix of the whole
// body, within the limit, cut on a character boundary, and marked as cut.
func FuzzCutBody(f *testing.F) {
	f.Add("short", 10)
	f.Add(strings.Repeat("é", 20), 7)
	f.Add("日本語のテキスト", 4)
	f.Add("🙂🙂🙂", 5)
	f.Fuzz(func(t *testing.T, body string, max int) {
		if max < 0 || max > 1<<16 || !utf8.ValidString(body) {
			t.Skip()
		}
		m := toMessage(bus.Entry{Envelope: bus.Envelope{ID: "x", Body: body}}, max)
		if !strings.HasPrefix(body, m.Body) || m.Size != len(body) {
			t.Fatalf("body %q cut to %q (size %d)", body, m.Body, m.Size)
		}
		if max > 0 && len(m.Body) > max {
			t.Fatalf("body cut to %d bytes, over %d", len(m.Body), max)
		}
		if !utf8.ValidString(m.Body) {
			t.Fatalf("cut %q in the middle of a character", m.Body)
		}
		if m.Truncated != (m.Body != body) {
			t.Fatalf("truncated %v for %q of %q", m.Truncated, m.Body, body)
		}
	})
}

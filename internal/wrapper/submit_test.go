package wrapper

import (
	"io"
	"testing"
)

// TestLastSubmit: an Enter that ends text the human typed or pasted is a
// submit; an Enter on an empty line, Ctrl-C, a line break inside a paste
// and plain typing are not.
func TestLastSubmit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   []string // one read each
		submit bool
	}{
		{name: "typed then Enter", keys: []string{"ls", "\r"}, submit: true},
		{name: "paste then Enter", keys: []string{"\x1b[200~kick off\x1b[201~", "\r"}, submit: true},
		{name: "paste and Enter in one read", keys: []string{"\x1b[200~kick off\x1b[201~\r"}, submit: true},
		{name: "Enter on an empty line", keys: []string{"\r"}},
		{name: "Ctrl-C", keys: []string{"ls", "\x03"}},
		{name: "line break inside a paste", keys: []string{"\x1b[200~a\rb\x1b[201~"}},
		{name: "typing only", keys: []string{"ls -l"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := newInput(io.Discard, nil, nil)
			for _, k := range tc.keys {
				if err := in.human([]byte(k)); err != nil {
					t.Fatal(err)
				}
			}
			if got := !in.LastSubmit().IsZero(); got != tc.submit {
				t.Errorf("submitted %v, want %v", got, tc.submit)
			}
			if in.LastHuman().IsZero() {
				t.Error("no human key noted")
			}
		})
	}
}

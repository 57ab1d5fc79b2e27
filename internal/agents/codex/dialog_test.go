package codex

import (
	"os"
	"strings"
	"testing"
)

// TestDialog: Codex 0.169.0's approval dialog as its screen showed it
// offline gives the command, the reason, and the keys of its options "Yes,
// proceed (y)" and "No, … (esc)"; a screen without it gives nothing.
func TestDialog(t *testing.T) {
	b, err := os.ReadFile("testdata/codex-0.169.0-approval.txt")
	if err != nil {
		t.Fatal(err)
	}
	screen := string(b)
	d, ok := Dialog(screen)
	if !ok {
		t.Fatal("the approval dialog was not read")
	}
	if d.Ask.Tool != "shell" || d.Ask.Detail != "touch approved.txt" ||
		string(d.Ask.Input) != `{"command":"touch approved.txt","reason":"mark the folder"}` {
		t.Errorf("ask %+v (input %s)", d.Ask, d.Ask.Input)
	}
	if string(d.Allow) != "y" || string(d.Deny) != "\x1b" {
		t.Errorf("keys allow %q deny %q, want y and Esc", d.Allow, d.Deny)
	}
	if want := []string{"allow: Yes, proceed", "deny: No, and tell Codex what to do differently"}; strings.Join(d.Ask.Options, "|") != strings.Join(want, "|") {
		t.Errorf("options %q, want %q", d.Ask.Options, want)
	}
	for name, s := range map[string]string{
		"answered":    screen[:strings.Index(screen, "  Would you like")],
		"no question": screen[strings.Index(screen, "  $ touch"):],
		"cut options": screen[:strings.Index(screen, "  3. No")],
	} {
		if d, ok := Dialog(s); ok {
			t.Errorf("%s: read a dialog %+v", name, d)
		}
	}
}

package gemini

import (
	"os"
	"strings"
	"testing"
)

// TestDialog: Gemini CLI 0.61.0's tool approval dialog as its screen showed
// it offline gives the tool, the command, and the keys of its options
// "1. Allow once" (its number) and "3. No, … (esc)".
func TestDialog(t *testing.T) {
	b, err := os.ReadFile("testdata/gemini-0.61.0-approval.txt")
	if err != nil {
		t.Fatal(err)
	}
	screen := string(b)
	d, ok := Dialog(screen)
	if !ok {
		t.Fatal("the approval dialog was not read")
	}
	if d.Ask.Tool != "Shell" || d.Ask.Detail != "touch approved.txt" || string(d.Ask.Input) != `{"command":"touch approved.txt"}` {
		t.Errorf("ask %+v (input %s)", d.Ask, d.Ask.Input)
	}
	if string(d.Allow) != "1" || string(d.Deny) != "\x1b" {
		t.Errorf("keys allow %q deny %q, want 1 and Esc", d.Allow, d.Deny)
	}
	if want := "allow: Allow once|deny: No, suggest changes"; strings.Join(d.Ask.Options, "|") != want {
		t.Errorf("options %q, want %q", d.Ask.Options, want)
	}
	if d, ok := Dialog(screen[:strings.Index(screen, "╭")]); ok {
		t.Errorf("read a dialog off a screen without one: %+v", d)
	}
}

package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
)

// TestParseApprove: the name and the flags in either order; mistakes are
// usage errors.
func TestParseApprove(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		name   string
		deny   bool
		reason string
		bad    bool
	}{
		{args: []string{"Bob"}, name: "Bob"},
		{args: []string{"--deny", "Bob"}, name: "Bob", deny: true},
		{args: []string{"Bob", "--deny", "--reason", "not today"}, name: "Bob", deny: true, reason: "not today"},
		{args: []string{"--deny", "--reason", "x", "Bob"}, name: "Bob", deny: true, reason: "x"},
		{args: []string{}, bad: true},
		{args: []string{"Bob", "Carol"}, bad: true},
		{args: []string{"bad name"}, bad: true},
		{args: []string{"--reason", "x", "Bob"}, bad: true}, // a reason needs --deny
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var errb bytes.Buffer
			o, err := parseApprove(&Env{Stderr: &errb, Getenv: func(string) string { return "" }}, tc.args)
			if tc.bad {
				if err == nil {
					t.Fatalf("accepted: %+v", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.name != tc.name || o.deny != tc.deny || o.reason != tc.reason {
				t.Errorf("got %+v", o)
			}
		})
	}
}

// TestWriteApprovals: one row a prompt; text from presence records is
// made safe for the terminal.
func TestWriteApprovals(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	err := writeApprovals(&b, now, []bus.Approval{{Agent: "Bob", Ask: bus.Ask{ID: "x", Tool: "Bash",
		Detail: "rm -rf build\x1b[2J", Options: []string{"allow", "deny"}, Since: now.Add(-90 * time.Second)}}})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b") || !strings.Contains(out, "Bob") || !strings.Contains(out, "allow,deny") || !strings.Contains(out, "1m30s ago") {
		t.Errorf("table:\n%q", out)
	}
}

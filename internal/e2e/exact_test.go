package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// sentBy returns the bodies of the messages from in the hub's log.
func (tm *team) sentBy(from string) []string {
	tm.t.Helper()
	out, err := tm.relay("log", "--json")
	if err != nil {
		tm.t.Fatalf("relay log: %v\n%s", err, out)
	}
	var bodies []string
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var e bus.Entry
		if err := dec.Decode(&e); err != nil {
			tm.t.Fatalf("relay log --json: %v\n%s", err, out)
		}
		if e.From == from {
			bodies = append(bodies, e.Body)
		}
	}
	return bodies
}

// TestExactTextCLIs: Codex and Gemini CLI render markdown on their screens
// (a backslash escape and code fence markers disappear there), so relay
// reads their commands from their own session files instead. A reply with
// an escaped @relay: line, one inside a code fence, one before a tool call
// and one after it sends exactly the two real ones, once each, word for
// word, and the wrapper says where it reads from.
func TestExactTextCLIs(t *testing.T) {
	for _, kind := range screenCLIs {
		t.Run(kind, func(t *testing.T) {
			tm := newTeam(t)
			const theEnd = "That is all for now."
			before := "Carol, " + kind + " here: the schema check passed, I am running the slow suite next."
			after := "Carol, " + kind + " again: the slow suite passed too, the branch is ready for review."
			tool := mockmodel.ToolUse{Name: "exec_command", Input: map[string]any{"cmd": "true"}}
			if kind == "gemini" {
				tool = mockmodel.ToolUse{Name: "run_shell_command", Input: map[string]any{"command": "true", "description": "check"}}
			}
			var extra []string
			if kind == "gemini" {
				extra = []string{"--yolo"} // run the tool without asking
			}
			bob := tm.screenCLISized(kind, "Bob", 0, 0, func(r mockmodel.Request) mockmodel.Reply {
				switch {
				case strings.Contains(r.LastUser, "say the end"):
					return mockmodel.Reply{Text: "@relay:Carol " + theEnd}
				case strings.Contains(r.LastUser, "start the check"):
					return mockmodel.Reply{Text: "Starting.\n\n\\@relay:Carol escaped, this must not be sent\n\n" +
						"```\n@relay:Carol inside a fence, this must not be sent\n```\n\n@relay:Carol " + before,
						ToolUse: &tool}
				case r.Turn > 0 && strings.Contains(r.LastUser, "Process") || strings.Contains(r.LastUser, "Output"):
					return mockmodel.Reply{Text: "Done.\n\n@relay:Carol " + after}
				}
				return mockmodel.Reply{Text: "OK."}
			}, extra...)
			tm.waitAgents("Bob")
			bob.term.Paste("start the check")
			if _, err := bob.term.WaitScreen(10*time.Second, func(s string) bool { return strings.Contains(s, "start the check") }); err != nil {
				t.Fatalf("prompt not in the input box: %v", err)
			}
			bob.term.Enter()
			bob.waitTurn(t, "start the check", 60*time.Second)
			testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
				if got := tm.sentBy("Bob"); len(got) < 2 {
					return fmt.Errorf("Bob sent %q so far", got)
				}
				return nil
			})
			bob.waitIdle(t)
			// One more turn, whose command marks the end: commands fire in
			// order, so one fired twice would be in the log before it.
			bob.term.Paste("say the end")
			if _, err := bob.term.WaitScreen(10*time.Second, func(s string) bool { return strings.Contains(s, "say the end") }); err != nil {
				t.Fatalf("prompt not in the input box: %v", err)
			}
			bob.term.Enter()
			testutil.WaitFor(t, 60*time.Second, 100*time.Millisecond, func() error {
				if got := tm.sentBy("Bob"); len(got) == 0 || got[len(got)-1] != theEnd {
					return fmt.Errorf("Bob sent %q so far", got)
				}
				return nil
			})
			got := tm.sentBy("Bob")
			if want := []string{before, after, theEnd}; strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("Bob sent %q\nwant exactly\n%q", got, want)
			}
			if log := tm.wrapperLog(); !strings.Contains(log, "found: commands come from its exact text") {
				t.Errorf("the wrapper's log does not say it reads the session file:\n%s", log)
			}
		})
	}
}

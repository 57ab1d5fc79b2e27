package aider_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents/aider"
	"github.com/relayhq/relay/internal/scanner"
)

// TestCommandBeforePromptFiresAtOnce feeds what aider prints when a reply
// ends in a command: the command, then at once its prompt with the cursor
// on it. The command fires as soon as its rows are quiet, without waiting
// for more output, and its body ends before the prompt; what the human
// then types on the prompt row is never part of it.
func TestCommandBeforePromptFiresAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name, prompt string
	}{
		{"default", "> "},
		{"ask mode", "ask> "},
		{"architect multi-line", "architect multi> "},
		{"indented", "  > "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			sc := scanner.New(scanner.Options{Cols: 80, Rows: 24, Cues: aider.Profile().Cues, Now: func() time.Time { return now }})
			var fired []string
			sc.Subscribe(func(e scanner.Event) {
				if e.Kind == scanner.EventCommand {
					fired = append(fired, fmt.Sprintf("@%s:%s %s", e.Command.NS, e.Command.Target, e.Command.Body))
				}
			})
			settle := func() {
				for range 3 {
					now = now.Add(time.Second)
					sc.Tick()
				}
			}
			write := func(s string) {
				if _, err := sc.Write([]byte(s)); err != nil {
					t.Fatal(err)
				}
				settle()
			}
			write("Sure, I will ask Bob.\r\n@relay:Bob do it\r\n" + tc.prompt)
			if got := strings.Join(fired, "|"); got != "@relay:Bob do it" {
				t.Fatalf("after the prompt fired %q, want the command with body \"do it\"\nscreen:\n%s", got, sc.Text())
			}
			write("@relay:Zed words the human typed")
			write("\r\n@relay:Carol next\r\n" + tc.prompt)
			if got := strings.Join(fired, "|"); got != "@relay:Bob do it|@relay:Carol next" {
				t.Fatalf("fired %q\nscreen:\n%s", got, sc.Text())
			}
		})
	}
}

// TestPromptCue checks which rows are aider's input row: a draft typed on
// it is a draft, a reply line that only starts with a mode word is not.
func TestPromptCue(t *testing.T) {
	for _, tc := range []struct {
		name, screen string
		draft        bool
	}{
		{"empty prompt", "reply\r\n> ", false},
		{"draft", "reply\r\n> fix the bug", true},
		{"mode prompt draft", "reply\r\nask> why", true},
		{"mode word in a reply is no prompt", "reply\r\nasking > nobody", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			sc := scanner.New(scanner.Options{Cols: 80, Rows: 24, Cues: aider.Cues(), Now: func() time.Time { return now }})
			if _, err := sc.Write([]byte(tc.screen)); err != nil {
				t.Fatal(err)
			}
			now = now.Add(time.Second)
			sc.Tick()
			if got := sc.State().Draft; got != tc.draft {
				t.Errorf("draft = %v, want %v\nscreen:\n%s", got, tc.draft, sc.Text())
			}
		})
	}
}

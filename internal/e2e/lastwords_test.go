package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestLastWordsReachPeer: an agent that writes a command and exits at once
// has it sent before its wrapper exits (issue 29: the command was logged at
// the child's exit and never reached the hub); Bob reads it exactly once.
func TestLastWordsReachPeer(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		bodies       []string
	}{
		{"line", `printf '@relay:Bob last words\n'`, []string{"last words"}},
		{"no line end", `printf '@relay:Bob last words'`, []string{"last words"}},
		{"two commands", `printf '@relay:Bob first of two\n\n@relay:Bob second of two\n'`, []string{"first of two", "second of two"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTeam(t)
			bob := tm.agent("Bob", script()...)
			tm.waitAgents("Bob")
			alice := tm.agent("Alice", "sh", "-c", tc.script)
			if code := alice.Wait(30 * time.Second); code != 0 {
				t.Fatalf("Alice's wrapper exited %d:\n%s", code, alice.Output())
			}
			// Everything was sent before the wrapper exited: the hub
			// holds each message now, without waiting.
			log, err := tm.relay("log", "--json")
			if err != nil {
				t.Fatalf("relay log: %v: %s", err, log)
			}
			for _, b := range tc.bodies {
				if n := strings.Count(log, b); n != 1 {
					t.Errorf("the hub's log holds %q %d times after Alice's wrapper exited, want 1:\n%s\nAlice's log:\n%s", b, n, log, tm.wrapperLog())
				}
			}
			if t.Failed() {
				return
			}
			testutil.Eventually(t, func() error {
				got := strings.Join(readLines(bob.Output()), "\n")
				for _, b := range tc.bodies {
					if !strings.Contains(got, b) {
						return fmt.Errorf("Bob has not read %q; he read:\n%s", b, got)
					}
				}
				return nil
			})
			// Give a duplicate every chance to show up: wait for the
			// receipts.
			testutil.Eventually(t, func() error {
				log, _ := tm.relay("log", "--json")
				if n := strings.Count(log, `"stage":"delivered"`); n < len(tc.bodies) {
					return fmt.Errorf("%d delivered, want %d:\n%s", n, len(tc.bodies), log)
				}
				return nil
			})
			got := strings.Join(readLines(bob.Output()), "\n")
			for _, b := range tc.bodies {
				if n := strings.Count(got, b); n != 1 {
					t.Errorf("Bob read %q %d times, want once:\n%s", b, n, got)
				}
			}
		})
	}
}

// TestLastWordsHubAway: an agent that writes a command and exits while the
// hub is away is not left silent: its wrapper waits for the hub (a while),
// then tells the human what was not sent.
func TestLastWordsHubAway(t *testing.T) {
	tm := newTeam(t)
	alice := tm.agent("Alice", "sh", "-c", `echo READY; read x; printf '@relay:Bob written as the hub left\n'`)
	tm.waitAgents("Alice")
	alice.WaitOutput("READY", 10*time.Second)
	tm.hub.Shutdown()
	alice.Type("\r")
	alice.Wait(60 * time.Second)
	out := string(alice.Output())
	if !strings.Contains(out, "1 message Alice wrote was not sent") {
		t.Errorf("the human was not told of the message that was not sent:\n%s", out)
	}
	if log := tm.wrapperLog(); !strings.Contains(log, "messages still in the outbox at exit") {
		t.Errorf("the log does not say what stayed in the outbox:\n%s", log)
	}
}

package session

import (
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/shell"
	"github.com/relayhq/relay/internal/scanner"
)

// fakeDialog reads a dialog "Run CMD? (y/esc)" off a screen.
func fakeDialog(screen string) (agents.ScreenDialog, bool) {
	_, rest, ok := strings.Cut(screen, "Run ")
	cmd, _, ok2 := strings.Cut(rest, "? (y/esc)")
	if !ok || !ok2 {
		return agents.ScreenDialog{}, false
	}
	return agents.ScreenDialog{Ask: agents.Ask{Tool: "shell", Detail: cmd, Options: []string{"allow: y", "deny: esc"}},
		Allow: []byte("y"), Deny: []byte{0x1b}}, true
}

// TestAnswerOnScreen: a dialog read off the screen is the agent's prompt;
// relay approve types the key of its option only while the screen shows
// that very dialog, and answers once the dialog is gone. A denial's reason
// is typed in once the agent is idle again.
func TestAnswerOnScreen(t *testing.T) {
	for _, tc := range []struct {
		name   string
		deny   bool
		later  string // the screen when relay approve looks
		keys   string // typed into the dialog
		errHas string
	}{
		{name: "allow", later: "Run touch m1? (y/esc)", keys: "y"},
		{name: "deny", deny: true, later: "Run touch m1? (y/esc)", keys: "\x1b"},
		{name: "another dialog", later: "Run rm -rf m1? (y/esc)", errHas: errDialogChanged.Error()},
		{name: "answered", later: "done", errHas: errDialogChanged.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof := shell.Profile()
			prof.Model, prof.Dialog = true, fakeDialog
			r := startRig(t, Config{Profile: prof})
			r.screenBusy(false)
			show := func(text string) {
				r.scr.mu.Lock()
				r.scr.text = text
				r.scr.mu.Unlock()
				_, waiting := fakeDialog(text)
				st := scanner.State{Busy: waiting, Waiting: waiting}
				if waiting {
					st.Dialog = text
				}
				r.s.onScreenState(st, "")
			}
			show("Run touch m1? (y/esc)")
			var ask *bus.Ask
			r.s.read(func(st *state) { ask = st.ask })
			if ask == nil || ask.Tool != "shell" || ask.Detail != "touch m1" || ask.ID == "" {
				t.Fatalf("the prompt read off the screen: %+v, want shell touch m1", ask)
			}
			if rep := r.s.approve(bus.Control{Op: bus.OpApprove, Ask: "other"}); rep.OK {
				t.Fatal("an approve naming another prompt was taken")
			}
			r.scr.mu.Lock()
			r.scr.text = tc.later
			r.scr.mu.Unlock()
			done := make(chan bus.ControlReply, 1)
			go func() {
				done <- r.s.approve(bus.Control{Op: bus.OpApprove, Ask: ask.ID, Deny: tc.deny, Reason: "not on Fridays"})
			}()
			if tc.keys != "" {
				deadline := time.Now().Add(10 * time.Second)
				for r.ty.String() != tc.keys {
					if time.Now().After(deadline) {
						t.Fatalf("typed %q, want %q", r.ty.String(), tc.keys)
					}
					time.Sleep(5 * time.Millisecond)
				}
				show("the dialog is gone")
			}
			rep := <-done
			if tc.errHas != "" {
				if rep.OK || !strings.Contains(rep.Error, tc.errHas) || r.ty.String() != "" {
					t.Fatalf("approve: %+v, typed %q; want %q and nothing typed", rep, r.ty.String(), tc.errHas)
				}
				return
			}
			if !rep.OK {
				t.Fatalf("approve: %+v", rep)
			}
			if tc.deny {
				r.screenBusy(false)
				r.waitTyped(t, "not on Fridays")
			}
		})
	}
}

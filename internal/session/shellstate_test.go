package session

import (
	"errors"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// TestAtPrompt: the cursor's row shows the primary prompt learned, or it
// does not (a continuation, a question, text typed after it).
func TestAtPrompt(t *testing.T) {
	cases := []struct {
		name          string
		prompt        string // what the first idle screen showed
		right         string // right of the cursor then
		before, after string
		alt           bool
		want          bool
	}{
		{"bash prompt back", "bash-5.2$ ", "", "bash-5.2$ ", "", false, true},
		{"bash open quote", "bash-5.2$ ", "", "> ", "", false, false},
		{"heredoc", "$ ", "", "> ", "", false, false},
		{"read -s password", "$ ", "", "Password:", "", false, false},
		{"read -p question", "bash-5.2$ ", "", "Your name? ", "", false, false},
		{"python open triple quote", ">>> ", "", "... ", "", false, false},
		{"python prompt back", ">>> ", "", ">>> ", "", false, true},
		{"working folder changed", "me@box:~/a$ ", "", "me@box:~/b/c$ ", "", false, true},
		{"ipython next prompt", "In [1]: ", "", "In [2]: ", "", false, true},
		{"ipython continuation", "In [1]: ", "", "   ...: ", "", false, false},
		{"zsh quote continuation", "% ", "", "quote> ", "", false, false},
		{"text right of the cursor", "$ ", "", "$ ", "main", false, false},
		{"zsh right prompt", "% ", "12:00", "% ", "12:01", false, true},
		{"full-screen program", "$ ", "", "$ ", "", true, false},
		{"no prompt learned", "", "", "> ", "", false, true},
		{"output without a line end before the prompt", "$ ", "", "Password:$ ", "", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p primaryPrompt
			p.learn(false, c.prompt, c.right, false)
			if got := p.atPrompt(c.before, c.after, c.alt); got != c.want {
				t.Errorf("atPrompt(%q, %q, %v) with prompt %q = %v, want %v", c.before, c.after, c.alt, c.prompt, got, c.want)
			}
		})
	}
}

// TestLearnPrompt: the prompt is learned at the first idle screen that
// shows one, and never once the human typed (what shows then may be a
// continuation prompt).
func TestLearnPrompt(t *testing.T) {
	var p primaryPrompt
	p.learn(false, "", "", false)  // blank: not yet
	p.learn(false, "$ ", "", true) // a full-screen program: not yet
	p.learn(false, "$ ", "", false)
	p.learn(false, "> ", "", false) // learned already
	if p.prompt != "$ " {
		t.Fatalf("prompt %q, want %q", p.prompt, "$ ")
	}
	var q primaryPrompt
	q.learn(true, "> ", "", false)
	q.learn(false, "$ ", "", false)
	if q.prompt != "" {
		t.Fatalf("prompt %q learned after the human typed, want none", q.prompt)
	}
	var r primaryPrompt
	r.stop() // relay typed
	r.learn(false, "# [relay] Message from", "", false)
	if r.prompt != "" {
		t.Fatalf("prompt %q learned after relay typed, want none", r.prompt)
	}
}

// TestReleaseHumanLine: a human line relay could not count is taken for
// empty once the shell shows its clean primary prompt while a message
// waits, and not while the shell shows a continuation prompt.
func TestReleaseHumanLine(t *testing.T) {
	for _, c := range []struct {
		name, row string
		want      bool
	}{
		{"clean prompt", "$ ", true},
		{"continuation prompt", "> ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startRig(t, Config{})
			r.scr.mu.Lock()
			r.scr.before = "$ "
			r.scr.mu.Unlock()
			r.screenBusy(false) // the first idle screen: the prompt is learned
			r.ty.mu.Lock()
			r.ty.unfinished = true
			r.ty.mu.Unlock()
			r.s.onHumanLine(true)
			r.scr.mu.Lock()
			r.scr.before = c.row
			r.scr.mu.Unlock()
			r.s.inbox.queue.Add(delivery.Item{Text: "hello"})
			released := func() bool {
				r.ty.mu.Lock()
				defer r.ty.mu.Unlock()
				return !r.ty.unfinished
			}
			if !c.want {
				// Positive sign: the loop looked at the screen twice.
				testutil.WaitFor(t, 5*time.Second, 20*time.Millisecond, func() error {
					r.ty.mu.Lock()
					defer r.ty.mu.Unlock()
					if r.ty.releases < 2 {
						return errors.New("the loop has not looked twice yet")
					}
					return nil
				})
				if released() {
					t.Fatal("the line was released at a continuation prompt")
				}
				return
			}
			testutil.WaitFor(t, 5*time.Second, 20*time.Millisecond, func() error {
				if !released() {
					return errors.New("the line is not released")
				}
				return nil
			})
		})
	}
}

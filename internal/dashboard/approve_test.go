package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/dashboard"
)

// TestBrowserApprove: a blocked agent's prompt shows on the page beside
// its screen, and the Allow button answers it as relay approve does: an
// approve request naming the prompt, on the agent's control subject.
func TestBrowserApprove(t *testing.T) {
	ctx := browser(t)
	e := start(t)
	bob := agent(t, e.hub, "bob", "Claude Code")
	bg, cancel := context.WithCancel(context.Background())
	defer cancel()
	asked := make(chan bus.Control, 1)
	go bob.ServeControl(bg, func(c bus.Control) bus.ControlReply {
		asked <- c
		return bus.ControlReply{OK: true, SessionID: "s1"}
	})
	ask := &bus.Ask{ID: "p1", Tool: "Bash", Detail: "touch marker <b>x</b>", Options: []string{"allow", "deny"}, Since: time.Now().UTC()}
	if err := bob.SetStateAsk(bg, bus.StateBlocked, ask); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(e.d.TokenURL()), chromedp.WaitVisible(chromedp.ID("agents"))); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 5*time.Second, "bob blocked", `!!document.querySelector('#agents li[data-name="bob"] .state.blocked')`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#agents li[data-name="bob"]`))); err != nil {
		t.Fatal(err)
	}
	within(t, ctx, 5*time.Second, "the prompt and its buttons",
		`(document.getElementById("ask")||{textContent:""}).textContent.includes("Bash: touch marker <b>x</b>") && !!document.getElementById("ask-allow") && !!document.getElementById("screen")`)
	// The wrapper's subscription may not be in place at once: click until
	// it answers.
	var c bus.Control
	for deadline, got := time.Now().Add(10*time.Second), false; !got; {
		if time.Now().After(deadline) {
			t.Fatal("the Allow button reached no wrapper")
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("ask-allow"))); err != nil {
			t.Fatal(err)
		}
		select {
		case c = <-asked:
			got = true
		case <-time.After(time.Second):
		}
	}
	if c.Op != bus.OpApprove || c.Ask != "p1" || c.Deny || c.By != "dashboard" {
		t.Errorf("the wrapper was asked %+v, want approve p1 by the dashboard", c)
	}
	within(t, ctx, 5*time.Second, "the answer", `document.body.textContent.includes("answered bob's prompt")`)
}

// TestApproveFromThePage: the page's approve request (here a deny with a
// reason) reaches the agent's wrapper as relay approve's does.
func TestApproveFromThePage(t *testing.T) {
	e := start(t)
	bob := agent(t, e.hub, "bob", "shell")
	asked := make(chan bus.Control, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go bob.ServeControl(ctx, func(c bus.Control) bus.ControlReply {
		asked <- c
		return bus.ControlReply{OK: true}
	})
	s := e.dial("")
	s.next()
	var f dashboard.Frame
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.send(dashboard.Request{Type: dashboard.ReqApprove, Agent: "bob", ID: "p1", Deny: true, Reason: "not today"})
		f = s.until("an answer", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeAnswered || f.Type == dashboard.TypeError })
		if f.Type == dashboard.TypeAnswered || time.Now().After(deadline) {
			break
		}
	}
	if f.Type != dashboard.TypeAnswered || f.To != "bob" {
		t.Fatalf("approve answered %+v", f)
	}
	if c := <-asked; c.Op != bus.OpApprove || c.Ask != "p1" || !c.Deny || c.Reason != "not today" || c.By != "dashboard" {
		t.Errorf("the wrapper was asked %+v", c)
	}
}

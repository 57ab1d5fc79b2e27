package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/dashboard"
)

// TestStopFromThePage: the page's stop request reaches the agent's wrapper
// on its control subject (as relay stop's does) and is answered; a stop
// of an agent whose wrapper does not run says so.
func TestStopFromThePage(t *testing.T) {
	e := start(t)
	bob := agent(t, e.hub, "bob", "shell")
	asked := make(chan bus.Control, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go bob.ServeControl(ctx, func(c bus.Control) bus.ControlReply {
		asked <- c
		return bus.ControlReply{OK: true, SessionID: "s1"}
	})
	s := e.dial("")
	s.next()
	// The subscription may not be in place at once: ask until it is.
	var f dashboard.Frame
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.send(dashboard.Request{Type: dashboard.ReqStop, Agent: "bob"})
		f = s.until("an answer", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeStopping || f.Type == dashboard.TypeError })
		if f.Type == dashboard.TypeStopping || time.Now().After(deadline) {
			break
		}
	}
	if f.Type != dashboard.TypeStopping || f.To != "bob" {
		t.Fatalf("stop answered %+v, want stopping bob", f)
	}
	if c := <-asked; c.Op != bus.OpStop || c.By != "dashboard" {
		t.Errorf("the wrapper was asked %+v", c)
	}
	s.send(dashboard.Request{Type: dashboard.ReqStop, Agent: "ghost"})
	if f := s.until("an error", func(f dashboard.Frame) bool { return f.Type == dashboard.TypeError }); f.Request != "stop" || !strings.Contains(f.Error, "not running") {
		t.Errorf("stop of an agent not running: %+v", f)
	}
}

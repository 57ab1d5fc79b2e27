package session

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
)

// TestScreenOnlyWhileWatched: the wrapper publishes its agent's screen
// only after a viewer asks for it (issue 34: an unwatched spinner costs no
// publish), at once when asked, and then as it changes.
func TestScreenOnlyWhileWatched(t *testing.T) {
	h := hubtest.Start(t)
	r := startRig(t, Config{Hub: h.URL(), Token: h.Token()})
	viewer := newPeer(t, h.URL(), h.Token(), "Viewer").c
	got := make(chan *nats.Msg, 64)
	sub, err := viewer.Conn().ChanSubscribe(bus.ScreenSubject("default", "Alice"), got)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := viewer.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.s.grp.Go(func() { r.s.publishScreen(ctx, r.scr, func() (int, int) { return 80, 24 }) })
	show := func(text string) {
		r.scr.mu.Lock()
		r.scr.text = text
		r.scr.mu.Unlock()
		select {
		case r.s.link.screen.changed <- struct{}{}:
		default:
		}
	}
	next := func(want string) {
		t.Helper()
		for {
			select {
			case m := <-got:
				var s bus.Screen
				if err := json.Unmarshal(m.Data, &s); err != nil {
					t.Fatal(err)
				}
				if s.Text == want {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no screen %q within 10s", want)
			}
		}
	}

	// Unwatched: output comes and two of the publisher's ticks pass
	// (before, a screen went out within one); nothing goes out. A marker
	// the viewer publishes after that comes first: nothing was before it.
	show("frame a")
	time.Sleep(2*screenEvery + 100*time.Millisecond) // a check that nothing happens
	show("frame c")
	if err := viewer.PublishScreen(bus.Screen{Agent: "Alice", Text: "marker"}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		var s bus.Screen
		if err := json.Unmarshal(m.Data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Text != "marker" {
			t.Fatalf("unwatched, the wrapper published %q", s.Text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the marker never came")
	}

	// Watched: the screen at once, unchanged as it is, then its changes.
	if err := viewer.WatchScreen("Alice"); err != nil {
		t.Fatal(err)
	}
	next("frame c")
	show("frame d")
	next("frame d")
}

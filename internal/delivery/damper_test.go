package delivery

import (
	"strings"
	"testing"
	"time"
)

func TestDamperPairWindow(t *testing.T) {
	d := NewDamper(DamperOptions{PairMax: 3, PairWindow: time.Minute, AgentMax: 100})
	now := time.Unix(0, 0)
	for i := 0; i < 3; i++ {
		if ok, why := d.Allow(now.Add(time.Duration(i)*time.Second), "Alice", "Bob", 0); !ok {
			t.Fatalf("message %d held: %s", i, why)
		}
	}
	ok, why := d.Allow(now.Add(10*time.Second), "Alice", "Bob", 0)
	if ok || !strings.Contains(why, "Alice sent Bob 3 messages") {
		t.Fatalf("4th message: %v %q", ok, why)
	}
	if ok, _ := d.Allow(now.Add(10*time.Second), "Alice", "Carol", 0); !ok {
		t.Fatal("another pair was held")
	}
	if ok, why := d.Allow(now.Add(61*time.Second), "Alice", "Bob", 0); !ok {
		t.Fatalf("held after the window moved on: %s", why)
	}
}

func TestDamperAgentWindow(t *testing.T) {
	d := NewDamper(DamperOptions{AgentMax: 2, PairMax: 100})
	now := time.Unix(0, 0)
	d.Allow(now, "Alice", "Bob", 0)
	d.Allow(now, "Alice", "Carol", 0)
	if ok, why := d.Allow(now, "Alice", "Dave", 0); ok || !strings.Contains(why, "Alice sent 2 messages") {
		t.Fatalf("got %v %q", ok, why)
	}
}

func TestDamperHops(t *testing.T) {
	d := NewDamper(DamperOptions{MaxHops: 4})
	if ok, _ := d.Allow(time.Now(), "Alice", "Bob", 4); !ok {
		t.Fatal("hop 4 held")
	}
	if ok, why := d.Allow(time.Now(), "Alice", "Bob", 5); ok || !strings.Contains(why, "limit 4") {
		t.Fatalf("hop 5: %v %q", ok, why)
	}
}

// TestDamperHeldAttemptsCount: held attempts count towards the windows, so
// an agent that keeps trying stays held; only the first held attempt of a
// pair in a window is reported, until the window has passed.
func TestDamperHeldAttemptsCount(t *testing.T) {
	d := NewDamper(DamperOptions{PairMax: 3, PairWindow: time.Minute, AgentMax: 100})
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, step := range []struct {
		at          int
		ok, quiet   bool
		description string
	}{
		{0, true, false, "first"},
		{1, true, false, "second"},
		{2, true, false, "third"},
		{3, false, false, "over the limit: held and reported"},
		{20, false, true, "held again: quiet"},
		{40, false, true, "held again: quiet"},
		{50, false, true, "held again: quiet"},
		{64, false, false, "still held (the attempts at 20, 40 and 50 s count), reported again a window after the last report"},
		{80, false, true, "quiet again"},
		{200, true, false, "after a quiet window: sent"},
	} {
		v := d.Check(at(step.at), "Alice", "Bob", 0)
		if v.OK != step.ok || v.Quiet != step.quiet || v.OK != (v.Why == "") {
			t.Fatalf("at %d s (%s): %+v", step.at, step.description, v)
		}
	}
}

// TestPingPongEnds replays issue 20's loop: two shells that answer every
// line typed into them (a message or a notice) with "@relay:PEER …". The
// exchange ends within the hop limit plus one round, each side gets one
// "held" notice, and nothing more happens for the rest of the minute.
// (Before, each notice was answered and held again without end.)
func TestPingPongEnds(t *testing.T) {
	opts := DamperOptions{MaxHops: 4, PairMax: 100, AgentMax: 100}
	type agent struct {
		name, peer string
		damper     *Damper
		lastHops   int // hops of the last message from the peer
	}
	agents := map[string]*agent{
		"A": {name: "A", peer: "B", damper: NewDamper(opts)},
		"B": {name: "B", peer: "A", damper: NewDamper(opts)},
	}
	type event struct {
		at time.Time
		to string // the agent a line is typed into
		// msg: a message from the peer with hops; otherwise a notice.
		msg  bool
		hops int
	}
	now := time.Unix(0, 0)
	queue := []event{{at: now, to: "A", msg: true, hops: 0}} // B's human starts it
	sent, notices, held := 0, 0, 0
	for len(queue) > 0 {
		ev := queue[0]
		queue = queue[1:]
		if ev.at.Sub(now) > time.Minute {
			t.Fatalf("still going after a minute: %d sent, %d notices, %d held records", sent, notices, held)
		}
		a := agents[ev.to]
		if ev.msg {
			a.lastHops = ev.hops
		}
		// The shell answers the line 100 ms later.
		at := ev.at.Add(100 * time.Millisecond)
		hops := a.lastHops + 1
		v := a.damper.Check(at, a.name, a.peer, hops)
		switch {
		case v.OK:
			sent++
			queue = append(queue, event{at: at, to: a.peer, msg: true, hops: hops})
		case !v.Quiet:
			held++ // the held record
			notices++
			queue = append(queue, event{at: at, to: a.name})
		}
	}
	if sent > opts.MaxHops+1 || notices > 2 || held > 2 {
		t.Fatalf("%d messages sent (hop limit %d), %d notices, %d held records", sent, opts.MaxHops, notices, held)
	}
	t.Logf("%d messages sent, %d notices, %d held records", sent, notices, held)
}

package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// history returns "from>to:body [status...]" for each entry of the log.
func history(t *testing.T, c *bus.Client, o bus.LogOptions) []string {
	t.Helper()
	var out []string
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.Log(ctx, o, func(e bus.Entry) error {
		out = append(out, fmt.Sprintf("%s>%s:%s %v", e.From, e.To, e.Body, e.Status))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Log(%+v) did not return in time", o)
	}
	return out
}

func TestLogShowsLatestStatus(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	carol := register(t, h, "carol")
	if got := history(t, alice, bus.LogOptions{}); len(got) != 0 {
		t.Fatalf("empty workspace log: %q", got)
	}
	ctx := context.Background()
	var receipts sync.Map
	rctx, stopReceipts := context.WithCancel(ctx)
	defer stopReceipts()
	go alice.Receipts(rctx, func(r bus.Receipt) { receipts.Store(r.ID+"/"+r.Agent, r.Status) })

	toBob, err := alice.Send(ctx, "bob", "one")
	if err != nil {
		t.Fatal(err)
	}
	all, err := alice.Send(ctx, "*", "two")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := carol.Send(ctx, "alice", "three"); err != nil {
		t.Fatal(err)
	}
	var col collector
	inbox(t, bob, &col)
	col.waitBodies(t, "one", "two")
	for _, d := range col.deliveries() {
		if err := d.Receipt(ctx, bus.StatusDelivered, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := col.deliveries()[0].Receipt(ctx, bus.StatusSeen, ""); err != nil {
		t.Fatal(err)
	}
	if err := carol.Receipt(ctx, all, bus.StatusFailed, "typed into a closed terminal"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, func() error {
		got := fmt.Sprint(history(t, alice, bus.LogOptions{}))
		want := "[alice>bob:one map[bob:seen] alice>*:two map[bob:delivered carol:failed] carol>alice:three map[alice:queued]]"
		if got != want {
			return testutil.Errorf("log\n got %s\nwant %s", got, want)
		}
		return nil
	})
	if got := fmt.Sprint(history(t, alice, bus.LogOptions{Agent: "carol"})); got !=
		"[alice>*:two map[bob:delivered carol:failed] carol>alice:three map[alice:queued]]" {
		t.Errorf("log --agent carol: %s", got)
	}
	if got := fmt.Sprint(history(t, alice, bus.LogOptions{ID: toBob.ID})); got != "[alice>bob:one map[bob:seen]]" {
		t.Errorf("log --id: %s", got)
	}
	testutil.Eventually(t, func() error {
		if st, _ := receipts.Load(toBob.ID + "/bob"); st != bus.StatusSeen {
			return testutil.Errorf("alice's receipt for her message to bob: %v", st)
		}
		return nil
	})
}

func TestLogFollow(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	register(t, h, "bob")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := alice.Send(ctx, "bob", "old"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	done := make(chan error, 1)
	go func() {
		done <- alice.Log(ctx, bus.LogOptions{Follow: true}, func(e bus.Entry) error {
			mu.Lock()
			seen = append(seen, e.Body+" "+string(e.Status["bob"]))
			mu.Unlock()
			return nil
		})
	}()
	want := func(w string) {
		t.Helper()
		testutil.Eventually(t, func() error {
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(seen) != w {
				return testutil.Errorf("follow saw %q, want %s", seen, w)
			}
			return nil
		})
	}
	want("[old queued]")
	env, err := alice.Send(ctx, "bob", "new")
	if err != nil {
		t.Fatal(err)
	}
	want("[old queued new queued]")
	bob := connect(t, h, "bob")
	if err := bob.Receipt(ctx, env, bus.StatusDelivered, ""); err != nil {
		t.Fatal(err)
	}
	want("[old queued new queued new delivered]")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Log returned %v after cancel", err)
	}
}

// TestLogLastAndSince: the last few messages of a long history, with or
// without an agent filter that makes them sparse, and the messages since a
// time; each with its full status, and Follow going on after them.
func TestLogLastAndSince(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	register(t, h, "bob")
	register(t, h, "carol")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	send := func(to, body string) bus.Envelope {
		t.Helper()
		env, err := alice.Send(ctx, to, body)
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	for i := range 600 {
		if i%100 == 0 {
			send("*", fmt.Sprint("all ", i)) // two copies: bob's and carol's
		} else {
			send("bob", fmt.Sprint("m", i))
		}
	}
	since := time.Now()
	last := send("*", "all 600")
	if err := alice.Receipt(ctx, last, bus.StatusDelivered, ""); err != nil { // a status to carry along
		t.Fatal(err)
	}
	bodies := func(o bus.LogOptions) string { return fmt.Sprint(history(t, alice, o)) }
	for _, tc := range []struct {
		name string
		o    bus.LogOptions
		want string
	}{
		{"last 3", bus.LogOptions{Last: 3}, "[alice>bob:m598 map[bob:queued] alice>bob:m599 map[bob:queued] alice>*:all 600 map[alice:delivered bob:queued carol:queued]]"},
		{"last 2 of carol's, far apart", bus.LogOptions{Last: 2, Agent: "carol"}, "[alice>*:all 500 map[bob:queued carol:queued] alice>*:all 600 map[alice:delivered bob:queued carol:queued]]"},
		{"last 1 by id", bus.LogOptions{Last: 1, ID: "nosuch"}, "[]"},
		{"since", bus.LogOptions{Since: since}, "[alice>*:all 600 map[alice:delivered bob:queued carol:queued]]"},
		{"since, last 5", bus.LogOptions{Since: since, Last: 5}, "[alice>*:all 600 map[alice:delivered bob:queued carol:queued]]"},
		{"since after the last", bus.LogOptions{Since: time.Now().Add(time.Hour)}, "[]"},
		{"since long ago, last 1 of carol's", bus.LogOptions{Since: since.Add(-time.Hour), Last: 1, Agent: "carol"}, "[alice>*:all 600 map[alice:delivered bob:queued carol:queued]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bodies(tc.o); got != tc.want {
				t.Errorf("log\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	whole := history(t, alice, bus.LogOptions{})
	if got := history(t, alice, bus.LogOptions{Since: since.Add(-time.Hour)}); fmt.Sprint(got) != fmt.Sprint(whole) {
		t.Errorf("since an hour before: got %d messages, want the whole log (%d)", len(got), len(whole))
	}
	for _, n := range []int{1, 7, 31, 100, 255, 600, 601, 1000} {
		want := whole[max(0, len(whole)-n):]
		if got := history(t, alice, bus.LogOptions{Last: n}); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the last %d: got %d messages, not the end of the whole log (%d)", n, len(got), len(want))
		}
	}

	var mu sync.Mutex
	var seen []string
	go alice.Log(ctx, bus.LogOptions{Last: 1, Follow: true}, func(e bus.Entry) error {
		mu.Lock()
		seen = append(seen, e.Body)
		mu.Unlock()
		return nil
	})
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(seen) != "[all 600]" {
			return testutil.Errorf("follow from the last one saw %q", seen)
		}
		return nil
	})
	send("bob", "after")
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(seen) != "[all 600 after]" {
			return testutil.Errorf("follow saw %q", seen)
		}
		return nil
	})
}

// TestLogFollowForgetsOld: Follow remembers the last Keep messages, so
// that a log followed for weeks stays small; a status change of one of them
// is still reported, that of an older one is not.
func TestLogFollowForgetsOld(t *testing.T) {
	h := startHub(t)
	alice := register(t, h, "alice")
	bob := register(t, h, "bob")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	var seen []string
	started := make(chan struct{})
	go alice.Log(ctx, bus.LogOptions{Follow: true, Keep: 3}, func(e bus.Entry) error {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s:%s", e.Body, e.Status["bob"]))
		if e.Body == "m0" && e.Status["bob"] == bus.StatusQueued {
			close(started)
		}
		return nil
	})
	var sent []bus.Envelope
	for i := range 6 {
		env, err := alice.Send(ctx, "bob", fmt.Sprint("m", i))
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, env)
		if i == 0 {
			<-started // Log follows from here on
		}
	}
	for _, i := range []int{0, 4} {
		if err := bob.Receipt(ctx, sent[i], bus.StatusDelivered, ""); err != nil {
			t.Fatal(err)
		}
	}
	// A marker after the receipts: once it is seen, both receipts were read.
	if _, err := alice.Send(ctx, "bob", "marker"); err != nil {
		t.Fatal(err)
	}
	want := "[m0:queued m1:queued m2:queued m3:queued m4:queued m5:queued m4:delivered marker:queued]"
	testutil.Eventually(t, func() error {
		mu.Lock()
		defer mu.Unlock()
		if got := fmt.Sprint(seen); got != want {
			return testutil.Errorf("follow saw\n %s\nwant\n %s", got, want)
		}
		return nil
	})
}

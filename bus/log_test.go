package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testutil"
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
	if err := col.deliveries()[0].Receipt(ctx, bus.StatusConfirmed, ""); err != nil {
		t.Fatal(err)
	}
	if err := carol.Receipt(ctx, all, bus.StatusFailed, "typed into a closed terminal"); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, func() error {
		got := fmt.Sprint(history(t, alice, bus.LogOptions{}))
		want := "[alice>bob:one map[bob:confirmed] alice>*:two map[bob:delivered carol:failed] carol>alice:three map[alice:queued]]"
		if got != want {
			return testutil.Errorf("log\n got %s\nwant %s", got, want)
		}
		return nil
	})
	if got := fmt.Sprint(history(t, alice, bus.LogOptions{Agent: "carol"})); got !=
		"[alice>*:two map[bob:delivered carol:failed] carol>alice:three map[alice:queued]]" {
		t.Errorf("log --agent carol: %s", got)
	}
	if got := fmt.Sprint(history(t, alice, bus.LogOptions{ID: toBob.ID})); got != "[alice>bob:one map[bob:confirmed]]" {
		t.Errorf("log --id: %s", got)
	}
	testutil.Eventually(t, func() error {
		if st, _ := receipts.Load(toBob.ID + "/bob"); st != bus.StatusConfirmed {
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

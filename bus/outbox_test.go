package bus_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/testing/testutil"
)

func TestOutboxQueuesWhileTheHubIsDown(t *testing.T) {
	home := testutil.Home(t)
	h1, err := hub.Start(context.Background(), hub.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	alice := register(t, h1, "alice")
	register(t, h1, "bob").Close()
	var mu sync.Mutex
	var results []string
	ob := alice.NewOutbox(bus.OutboxOptions{Size: 3, OnSent: func(e bus.Envelope, err error) {
		mu.Lock()
		results = append(results, fmt.Sprintf("%s:%v", e.Body, err))
		mu.Unlock()
	}})
	h1.Shutdown()

	for i := range 3 {
		if _, err := ob.Post(bus.Message{To: "bob", Body: fmt.Sprint("queued ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ob.Post(bus.Message{To: "bob", Body: "one too many"}); !errors.Is(err, bus.ErrOutboxFull) {
		t.Fatalf("fourth post with Size 3: %v, want ErrOutboxFull", err)
	}
	if n := ob.Len(); n != 3 {
		t.Errorf("Len = %d while the hub is down, want 3", n)
	}

	h2 := startHubAt(t, home, "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ob.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(results) != "[queued 0:<nil> queued 1:<nil> queued 2:<nil>]" {
		t.Errorf("results %v", results)
	}
	var col collector
	inbox(t, register(t, h2, "bob"), &col)
	col.waitBodies(t, "queued 0", "queued 1", "queued 2")
}

package session

import (
	"context"
	"testing"
	"time"

	"github.com/relayhq/relay/patterns"
)

// TestCmdQueueCloseHandsOutTheRest: once closed (the agent exited), the
// queue refuses new commands, still hands out every command put before, in
// order, and then reports its end at once instead of waiting for more.
func TestCmdQueueCloseHandsOutTheRest(t *testing.T) {
	q := newCmdQueue()
	q.put(patterns.Command{NS: "relay", Target: "Bob", Body: "one"})
	q.put(patterns.Command{NS: "relay", Target: "Bob", Body: "two"})
	q.close()
	if q.put(patterns.Command{NS: "relay", Target: "Bob", Body: "late"}) {
		t.Error("put after close accepted a command that no handler will run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, want := range []string{"one", "two"} {
		c, ok := q.get(ctx)
		if !ok || c.Body != want {
			t.Fatalf("get = %q, %v; want %q", c.Body, ok, want)
		}
	}
	if c, ok := q.get(ctx); ok {
		t.Fatalf("get after the last = %q, want the end", c.Body)
	}
	if ctx.Err() != nil {
		t.Fatal("get waited for the context instead of reporting the end")
	}
}

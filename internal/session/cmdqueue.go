package session

import (
	"context"
	"sync"

	"github.com/relayhq/relay/patterns"
)

// cmdQueue hands the commands the agent wrote to the handlers, in order.
// Put never blocks (the scanner's callback must not) and never drops: a
// burst of commands waits here until the handlers get to it.
type cmdQueue struct {
	mu    sync.Mutex
	items []patterns.Command
	ready chan struct{}
}

func newCmdQueue() *cmdQueue { return &cmdQueue{ready: make(chan struct{}, 1)} }

func (q *cmdQueue) put(c patterns.Command) {
	q.mu.Lock()
	q.items = append(q.items, c)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// get waits for the next command; false when ctx ended.
func (q *cmdQueue) get(ctx context.Context) (patterns.Command, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			c := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return c, true
		}
		q.mu.Unlock()
		select {
		case <-ctx.Done():
			return patterns.Command{}, false
		case <-q.ready:
		}
	}
}

package session

import (
	"context"
	"sync"

	"github.com/relayhq/relay/patterns"
)

// cmdQueue hands the commands the agent wrote to the handlers, in order.
// Put never blocks (the scanner's callback must not) and never drops: a
// burst of commands waits here until the handlers get to it. Once closed
// (the agent exited and its screen was read to the end), get hands out
// what is left and then reports the end.
type cmdQueue struct {
	mu     sync.Mutex
	items  []patterns.Command
	closed bool
	ready  chan struct{}
}

func newCmdQueue() *cmdQueue { return &cmdQueue{ready: make(chan struct{}, 1)} }

// put queues c; false when the queue is closed (c is not handled).
func (q *cmdQueue) put(c patterns.Command) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, c)
	q.mu.Unlock()
	q.wake()
	return true
}

func (q *cmdQueue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// close says no more commands come that must be handled: get returns false
// once the queue is empty.
func (q *cmdQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}

// len is the number of commands waiting.
func (q *cmdQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// get waits for the next command; false when ctx ended, or when the queue
// is closed and empty.
func (q *cmdQueue) get(ctx context.Context) (patterns.Command, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			c := q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return c, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return patterns.Command{}, false
		}
		select {
		case <-ctx.Done():
			return patterns.Command{}, false
		case <-q.ready:
		}
	}
}

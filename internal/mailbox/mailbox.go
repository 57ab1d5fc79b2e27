// Package mailbox is the one hand-off between goroutines that relay's stages
// use: an unbounded first-in first-out queue whose Put never blocks and
// never drops, and whose reader waits on a channel it can select on beside
// a context or other channels.
//
// It replaces the "mutex, slice and chan struct{} of capacity 1" written by
// hand in each stage (as nats-server has one ipQueue): producers are
// callbacks that must not block (a scanner's, a NATS handler's), and the
// consumer is one goroutine.
package mailbox

import (
	"context"
	"sync"
)

// Mailbox is an unbounded FIFO queue of T. Any number of goroutines may Put;
// Get, Take and TakeAll are meant for one reader at a time (several are
// safe, but each item goes to one of them). The zero value is not usable:
// make one with New.
type Mailbox[T any] struct {
	mu     sync.Mutex
	items  []T
	head   int // items[head:] are waiting
	closed bool
	ready  Signal
}

// New returns an empty, open mailbox.
func New[T any]() *Mailbox[T] {
	return &Mailbox[T]{ready: NewSignal()}
}

// Put queues v and wakes the reader; it never blocks. It returns false,
// and queues nothing, once the mailbox is closed.
func (m *Mailbox[T]) Put(v T) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.items = append(m.items, v)
	m.mu.Unlock()
	m.ready.Notify()
	return true
}

// Ready returns the channel that receives a value after a Put or Close: a
// reader selects on it, then calls Take or TakeAll until they report
// nothing. One value may stand for many Puts, and one may come when
// nothing is left (a Take raced it).
func (m *Mailbox[T]) Ready() <-chan struct{} { return m.ready }

// Take removes and returns the oldest item; false when none waits.
func (m *Mailbox[T]) Take() (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.takeLocked()
}

func (m *Mailbox[T]) takeLocked() (T, bool) {
	var zero T
	if m.head == len(m.items) {
		return zero, false
	}
	v := m.items[m.head]
	m.items[m.head] = zero // the queue keeps no reference to what it handed out
	m.head++
	m.compact()
	return v, true
}

// compact reuses the array once items were taken from its front; m.mu is
// held.
func (m *Mailbox[T]) compact() {
	switch {
	case m.head == len(m.items):
		// Empty: start again at the front of the same array.
		m.items, m.head = m.items[:0], 0
	case m.head >= 32 && m.head*2 >= len(m.items):
		// Mostly consumed: move the rest to the front, so that a queue
		// that never empties does not grow its array for ever.
		n := copy(m.items, m.items[m.head:])
		clear(m.items[n:])
		m.items, m.head = m.items[:n], 0
	}
}

// TakeAll removes and returns every waiting item, oldest first; nil when
// none waits.
func (m *Mailbox[T]) TakeAll() []T {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.head == len(m.items) {
		return nil
	}
	out := make([]T, len(m.items)-m.head)
	copy(out, m.items[m.head:])
	clear(m.items)
	m.items, m.head = m.items[:0], 0
	return out
}

// TakeN removes and returns up to n waiting items, oldest first; nil when
// none waits. A reader that hands items on in rounds of a bounded size
// (the receipts published together) takes one round at a time.
func (m *Mailbox[T]) TakeN(n int) []T {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := min(n, len(m.items)-m.head)
	if k <= 0 {
		return nil
	}
	out := make([]T, k)
	copy(out, m.items[m.head:])
	clear(m.items[m.head : m.head+k])
	m.head += k
	m.compact()
	return out
}

// Get waits for the oldest item and removes it. It returns false when ctx
// ends, or when the mailbox is closed and empty: what was put before Close
// is still handed out.
func (m *Mailbox[T]) Get(ctx context.Context) (T, bool) {
	for {
		m.mu.Lock()
		v, ok := m.takeLocked()
		closed := m.closed
		m.mu.Unlock()
		if ok {
			return v, true
		}
		if closed {
			return v, false
		}
		select {
		case <-ctx.Done():
			return v, false
		case <-m.ready:
		}
	}
}

// Close says nothing more will be put: later Puts return false, and Get
// reports the end once the items already queued are taken. It is safe to
// call more than once.
func (m *Mailbox[T]) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.ready.Notify()
}

// Closed reports whether Close was called.
func (m *Mailbox[T]) Closed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Len is the number of items waiting.
func (m *Mailbox[T]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items) - m.head
}

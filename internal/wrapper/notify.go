package wrapper

import "sync"

// lineNotifier hands changes of the human's line to a callback without ever
// making the human's keys wait for it: post records the newest value and
// starts a goroutine to deliver it when none is running. Values posted
// while a call runs are merged into the newest, and a value equal to the
// one delivered last is not delivered again, so the callback sees
// alternating values ending with the current one.
type lineNotifier struct {
	fn    func(bool)
	spawn func(func())
	wg    sync.WaitGroup

	mu        sync.Mutex
	value     bool // the newest value posted
	pending   bool // value not yet taken by the delivering goroutine
	running   bool // a delivering goroutine is running
	delivered bool // the value the callback got last (false at first)
}

// newLineNotifier returns a notifier calling fn, on goroutines started by
// spawn; fn nil makes it do nothing.
func newLineNotifier(fn func(bool), spawn func(func())) *lineNotifier {
	if spawn == nil {
		spawn = func(f func()) { go f() }
	}
	return &lineNotifier{fn: fn, spawn: spawn}
}

// post records v as the current value; it never blocks on the callback.
func (n *lineNotifier) post(v bool) {
	if n.fn == nil {
		return
	}
	n.mu.Lock()
	n.value, n.pending = v, true
	if n.running {
		n.mu.Unlock()
		return
	}
	n.running = true
	n.wg.Add(1)
	n.mu.Unlock()
	n.spawn(n.run)
}

func (n *lineNotifier) run() {
	defer n.wg.Done()
	for {
		n.mu.Lock()
		if !n.pending {
			n.running = false
			n.mu.Unlock()
			return
		}
		v := n.value
		n.pending = false
		same := v == n.delivered
		n.delivered = v
		n.mu.Unlock()
		if !same {
			n.fn(v)
		}
	}
}

// wait returns when no delivery is running; call it once nothing posts
// any more.
func (n *lineNotifier) wait() { n.wg.Wait() }

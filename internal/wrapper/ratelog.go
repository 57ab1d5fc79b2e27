package wrapper

import (
	"sync"
	"time"
)

// resizeLogEvery is how often at most a resize (SIGWINCH) is logged: a
// window dragged by the human sends hundreds a second.
const resizeLogEvery = time.Second

// rateLog lets one event a period through to the log and counts the rest.
// The zero value lets one through every resizeLogEvery on the wall clock.
type rateLog struct {
	mu      sync.Mutex
	every   time.Duration    // zero: resizeLogEvery
	now     func() time.Time // nil: time.Now
	last    time.Time
	dropped int
}

// allow reports whether this event is logged and, if so, how many were not
// since the last one that was.
func (r *rateLog) allow() (ok bool, dropped int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now, every := time.Now, r.every
	if r.now != nil {
		now = r.now
	}
	if every == 0 {
		every = resizeLogEvery
	}
	t := now()
	if !r.last.IsZero() && t.Sub(r.last) < every {
		r.dropped++
		return false, 0
	}
	r.last, dropped, r.dropped = t, r.dropped, 0
	return true, dropped
}

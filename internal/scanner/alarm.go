package scanner

import (
	"time"

	"github.com/relayhq/relay/internal/mailbox"
)

// alarm wakes Run's clock once the screen has been quiet for the quiet
// time (clock.go), a deadline that each changed row moves later. A Go
// timer cannot be moved later for free: the runtime keeps waking at the
// time it was first set (it adjusts a timer moved later only when the old
// time comes), and each such wake also wakes its monitor thread, sysmon.
// Under a spinner redrawn 12.5 times a second, that was two useless
// wake-ups of two threads a second, a quarter of a wrapper's CPU (issue
// 34). On Linux the alarm is a timerfd in the runtime's netpoller, moved
// by one system call from the frame that changed a row; the runtime has no
// timer to wake for while output flows. Elsewhere, or when a timerfd
// cannot be had, it is a Go timer and move does nothing: the clock finds
// the screen not quiet yet when it fires and sets it again.
type alarm struct {
	// C receives a token when the alarm fires; a fire may come after a
	// set or move that should have cancelled it: the clock looks at the
	// screen's state again, it never acts on the token alone.
	C  mailbox.Signal
	fd *timerFD    // nil when the alarm is a Go timer
	t  *time.Timer // the Go timer, when fd is nil
	on bool        // set and not yet fired or stopped, as far as set/stop know
}

// newAlarm returns a stopped alarm; close releases it.
func newAlarm() *alarm {
	a := &alarm{C: mailbox.NewSignal()}
	if fd, err := openTimerFD(a.C); err == nil {
		a.fd = fd
		return a
	}
	a.t = time.AfterFunc(time.Hour, a.C.Notify)
	a.t.Stop()
	return a
}

// set arms the alarm to fire d from now, replacing what it was set to.
func (a *alarm) set(d time.Duration) {
	a.on = true
	if a.fd != nil {
		a.fd.set(d)
		return
	}
	a.t.Reset(d)
}

// move sets the alarm to fire d from now when that costs no wake-up: a
// timerfd is set again; a Go timer is left alone.
func (a *alarm) move(d time.Duration) {
	if a.fd != nil {
		a.fd.set(d)
	}
}

// stop disarms the alarm if set or stop last armed it.
func (a *alarm) stop() {
	if !a.on {
		return
	}
	a.on = false
	if a.fd != nil {
		a.fd.set(0)
		return
	}
	a.t.Stop()
}

// fired notes that a token came on C.
func (a *alarm) fired() { a.on = false }

// close releases the alarm; it fires no more.
func (a *alarm) close() {
	if a.fd != nil {
		a.fd.close()
		return
	}
	a.t.Stop()
}

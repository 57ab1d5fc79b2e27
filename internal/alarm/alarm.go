// Package alarm is a deadline that can be moved without waking anyone: a
// timerfd in the runtime's netpoller on Linux, a Go timer elsewhere.
package alarm

import (
	"time"

	"github.com/relayhq/relay/internal/mailbox"
)

// An Alarm notifies C once, when a deadline passes. The scanner's clock
// waits on one for the screen's quiet time, a deadline that each changed
// row moves later; the wrapper's tap on one for output it held back. A Go
// timer cannot be moved later for free: the runtime keeps waking at the
// time it was first set (it adjusts a timer moved later only when the old
// time comes), and each such wake also wakes its monitor thread, sysmon.
// Under a spinner redrawn 12.5 times a second, that was two useless
// wake-ups of two threads a second, a quarter of a wrapper's CPU (issue
// 34). On Linux the alarm is a timerfd in the runtime's netpoller, moved
// by one system call from the frame that changed a row; the runtime has no
// timer to wake for while output flows. Elsewhere, or when a timerfd
// cannot be had, it is a Go timer and Move does nothing: the clock finds
// the screen not quiet yet when it fires and sets it again.
type Alarm struct {
	// C receives a token when the alarm fires; a fire may come after a
	// Set or Move that should have cancelled it: whoever waits on it looks
	// at what it waits for again, and never acts on the token alone.
	C  mailbox.Signal
	fd *timerFD    // nil when the alarm is a Go timer
	t  *time.Timer // the Go timer, when fd is nil
	on bool        // set and not yet fired or stopped, as far as Set and Stop know
}

// New returns a stopped alarm; Close releases it.
func New() *Alarm {
	a := &Alarm{C: mailbox.NewSignal()}
	if fd, err := openTimerFD(a.C); err == nil {
		a.fd = fd
		return a
	}
	a.t = time.AfterFunc(time.Hour, a.C.Notify)
	a.t.Stop()
	return a
}

// Set arms the alarm to fire d from now, replacing what it was set to.
func (a *Alarm) Set(d time.Duration) {
	a.on = true
	if a.fd != nil {
		a.fd.set(d)
		return
	}
	a.t.Reset(d)
}

// Move sets the alarm to fire d from now when that costs no wake-up: a
// timerfd is set again; a Go timer is left alone.
func (a *Alarm) Move(d time.Duration) {
	if a.fd != nil {
		a.fd.set(d)
	}
}

// Stop disarms the alarm if Set armed it since it last fired or stopped.
func (a *Alarm) Stop() {
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

// Fired notes that a token came on C.
func (a *Alarm) Fired() { a.on = false }

// Close releases the alarm; it fires no more.
func (a *Alarm) Close() {
	if a.fd != nil {
		a.fd.close()
		return
	}
	a.t.Stop()
}

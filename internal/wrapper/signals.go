package wrapper

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// endSignals are the signals that end a wrapped session when they come
// before its child runs: a hangup, a termination, and the interrupt and
// quit keys sent as signals.
func endSignals() []os.Signal {
	return []os.Signal{unix.SIGHUP, unix.SIGTERM, unix.SIGINT, unix.SIGQUIT}
}

// Signals catches the signals that end a wrapped session (SIGHUP, SIGTERM,
// SIGINT, SIGQUIT) from the moment it is made until Stop, so that none of
// them kills the process by its default action at a moment of start-up or
// shutdown: with the human's terminal raw, or before the child that should
// get it runs. Make it first (before connecting anywhere, before the child
// starts), hand it to Start in Options.Signals, and Stop it last. Start
// refuses to start a child once one has arrived (SignalError); while the
// child runs, the session's own handling forwards them to it.
type Signals struct {
	ch       chan os.Signal
	done     chan struct{} // closed at the first signal
	quit     chan struct{} // closed by Stop
	stopOnce sync.Once

	mu    sync.Mutex
	first syscall.Signal
	next  []chan struct{} // closed at the next signal (After)
}

// CatchSignals starts catching the signals that end a session.
func CatchSignals() *Signals {
	sg := &Signals{ch: make(chan os.Signal, 4), done: make(chan struct{}), quit: make(chan struct{})}
	signal.Notify(sg.ch, endSignals()...)
	go sg.run()
	return sg
}

func (sg *Signals) run() {
	for {
		select {
		case <-sg.quit:
			return
		case sig := <-sg.ch:
			sg.mu.Lock()
			if sg.first == 0 {
				sg.first = sig.(syscall.Signal)
				close(sg.done)
			}
			for _, ch := range sg.next {
				close(ch)
			}
			sg.next = nil
			sg.mu.Unlock()
		}
	}
}

// Done is closed when the first signal arrives.
func (sg *Signals) Done() <-chan struct{} { return sg.done }

// After returns a channel closed when a signal arrives after this call:
// the human's Ctrl-C on a wait relay tells them about, once the terminal
// is theirs again.
func (sg *Signals) After() <-chan struct{} {
	ch := make(chan struct{})
	sg.mu.Lock()
	sg.next = append(sg.next, ch)
	sg.mu.Unlock()
	return ch
}

// Caught returns the first signal that arrived, if one did.
func (sg *Signals) Caught() (syscall.Signal, bool) {
	sg.mu.Lock()
	defer sg.mu.Unlock()
	return sg.first, sg.first != 0
}

// Stop ends the catching: the signals have their default effect again
// (unless something else catches them). It is safe to call more than once.
func (sg *Signals) Stop() {
	sg.stopOnce.Do(func() {
		signal.Stop(sg.ch)
		close(sg.quit)
	})
}

// SignalError is returned by Start when a signal that ends the session
// arrived before the child started (see Signals): no child was started and
// the human's terminal was not touched.
type SignalError struct{ Signal syscall.Signal }

func (e *SignalError) Error() string {
	return fmt.Sprintf("%v before the child started", e.Signal)
}

// Code is the conventional exit status for the signal: 128+n.
func (e *SignalError) Code() int { return 128 + int(e.Signal) }

package mailbox

// Signal is a wake-up token without a queue behind it: any number of
// goroutines Notify, never blocking, and one reader receives from the
// channel, beside a context or a timer, then looks at the state the token
// stands for. Notifications that come while one waits are merged into it.
// It is the "chan struct{} of capacity 1" that stages wrote by hand.
//
// A nil Signal ignores Notify and never fires, as a nil channel does; make
// one with NewSignal.
type Signal chan struct{}

// NewSignal returns a Signal with no token waiting.
func NewSignal() Signal { return make(Signal, 1) }

// Notify leaves a token unless one already waits; it never blocks.
func (s Signal) Notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

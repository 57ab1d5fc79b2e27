package bus

import (
	"net"
	"net/url"
	"sync/atomic"
	"time"
)

// hubDialer dials the hub for Connect. Its connections read and write
// with raw system calls where the platform allows (hubconn_linux.go):
// a Go system call wakes the runtime's monitor thread (sysmon) from its
// sleep, which then naps 20 µs at a time and hands the processor to a
// second thread while the call lasts, a futex and a thread's wake-up for
// each heartbeat's write and read of an idle wrapper (issue 34). nats.go
// layers TLS (and websocket framing) on the connection it returns, as on
// its own dialer's.
type hubDialer struct {
	d net.Dialer
	// find says where the hub is now (Options.Discover); nil: the
	// address nats.go asks for. The first dial does not ask it: the
	// caller has just found the hub at Options.URL.
	find    func() (string, error)
	dialled atomic.Bool
}

// newHubDialer returns Connect's dialer. timeout bounds a dial, as
// nats.Timeout bounds one by nats.go's own dialer; a hub found again
// through find is dialled within rediscoverTimeout.
func newHubDialer(find func() (string, error), timeout time.Duration) *hubDialer {
	if find != nil {
		timeout = rediscoverTimeout
	}
	return &hubDialer{d: net.Dialer{Timeout: timeout}, find: find}
}

// rediscoverTimeout bounds a dial of a hub found through Options.Discover:
// a hub that moved is found again by the next reconnection.
const rediscoverTimeout = 2 * time.Second

func (h *hubDialer) Dial(network, address string) (net.Conn, error) {
	if h.find != nil && h.dialled.Swap(true) {
		if u, err := h.find(); err == nil {
			if pu, err := url.Parse(u); err == nil && pu.Host != "" {
				address = pu.Host
			}
		}
	}
	c, err := h.d.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return rawConnOf(c), nil
}

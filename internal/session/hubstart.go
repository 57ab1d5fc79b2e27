package session

import (
	"context"
	"fmt"
	"sync"

	"github.com/relayhq/relay/internal/hub"
)

// ErrNoHub is returned by Run when no hub runs for Home and none could be
// started: neither a detached one (no relay binary) nor one inside this
// program. Its message names the fix. It is hub.ErrNoHub, declared once.
var ErrNoHub = hub.ErrNoHub

// localHub is a hub this session runs inside its own process, because no
// relay binary could start a detached one; it stops with the session.
type localHub struct {
	mu   sync.Mutex
	stop func() // the hub and its memory service
}

// ensureHub returns the hub recorded in Home, or starts one: detached with
// the relay binary (Config.Executable when it is relay, else relay on
// PATH), else inside this process. It never runs a program that is not
// relay: a Go program on the API that ran itself as `PROGRAM up --detach`
// started copies of itself without end.
//
// Unless ask is set, a hub whose record names a live process is returned
// without asking it (found is true): the connection that follows asks it,
// and is the one the session keeps (issue 34: asking first was a second
// connection on every start). When that connection is not answered the
// caller asks again with ask set: the hub is asked and, when it does not
// answer, a new one is started, as before.
func (s *Session) ensureHub(ctx context.Context, ask bool) (ep hub.Endpoint, found bool, err error) {
	home := s.cfg.Home
	if !ask {
		if ep, err := hub.Find(home); err == nil {
			return ep, true, nil
		}
	}
	if exe := s.relayBinary(); exe != "" {
		ep, err := hub.EnsureRunning(ctx, home, exe) // asks the recorded hub first
		if err != nil {
			return ep, false, fmt.Errorf("start hub with %s: %w", exe, err)
		}
		return ep, false, nil
	}
	ep, err = hub.EnsureRunningWith(ctx, home, s.startLocalHub)
	if err != nil {
		return ep, false, fmt.Errorf("%w in %s and none could be started inside this program: %w; "+
			"start one with `relay up --detach`, put the relay binary on PATH (or set Options.Executable), or name a hub with Options.Hub",
			ErrNoHub, home, err)
	}
	return ep, false, nil
}

// close stops the hub this session runs, if any.
func (l *localHub) close() {
	l.mu.Lock()
	stop := l.stop
	l.stop = nil
	l.mu.Unlock()
	if stop != nil {
		stop()
	}
}

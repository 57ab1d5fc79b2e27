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
func (s *Session) ensureHub(ctx context.Context) (hub.Endpoint, error) {
	home := s.cfg.Home
	if ep, err := hub.Discover(home); err == nil {
		return ep, nil
	}
	if exe := s.relayBinary(); exe != "" {
		ep, err := hub.EnsureRunning(ctx, home, exe)
		if err != nil {
			return ep, fmt.Errorf("start hub with %s: %w", exe, err)
		}
		return ep, nil
	}
	ep, err := hub.EnsureRunningWith(ctx, home, s.startLocalHub)
	if err != nil {
		return ep, fmt.Errorf("%w in %s and none could be started inside this program: %w; "+
			"start one with `relay up --detach`, put the relay binary on PATH (or set Options.Executable), or name a hub with Options.Hub",
			ErrNoHub, home, err)
	}
	return ep, nil
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

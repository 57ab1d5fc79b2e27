package session

import (
	"context"
	"fmt"
	"sync"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
)

// ErrNoHub is returned by Run when no hub runs for Home and none could be
// started: neither a detached one (no relay binary) nor one inside this
// program. Its message names the fix. It is hub.ErrNoHub, declared once.
var ErrNoHub = hub.ErrNoHub

// localHub is a hub this session runs inside its own process, because no
// relay binary could start a detached one; it stops with the session.
type localHub struct {
	mu   sync.Mutex
	h    *hub.Hub
	stop func() // the memory service
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

// startLocalHub runs the hub (and its memory service) inside this process
// and tells the human, who may expect it to outlive this program.
func (s *Session) startLocalHub(ctx context.Context) (hub.Endpoint, error) {
	h, err := hub.Start(ctx, hub.Options{Home: s.cfg.Home, Logger: s.log.With("from", "hub")})
	if err != nil {
		return hub.Endpoint{}, err
	}
	stop, err := serveMemory(ctx, h, s.grp)
	if err != nil {
		// Messages work without it; @memory says it is unavailable.
		s.log.Warn("the hub inside this program serves no memory", "err", err)
		stop = func() {}
	}
	s.link.local.mu.Lock()
	s.link.local.h, s.link.local.stop = h, stop
	s.link.local.mu.Unlock()
	s.log.Warn("no relay binary on PATH: the hub runs inside this program", "url", h.URL())
	if s.cfg.Stdout != nil {
		fmt.Fprintf(s.cfg.Stdout, "relay: no relay binary on PATH (or Options.Executable): the hub runs inside this program on %s and stops when it exits; `relay up --detach` runs one that stays.\r\n", h.URL())
	}
	return h.Endpoint(), nil
}

// serveMemory answers the memory service's requests on h, as relay up does.
func serveMemory(ctx context.Context, h *hub.Hub, grp group) (func(), error) {
	st, err := memory.Open(memory.DefaultPath(h.Home()), nil)
	if err != nil {
		return nil, err
	}
	ep := h.Endpoint()
	nc, err := bus.Dial(ctx, bus.Options{URL: ep.URL, Token: ep.Token, TLSPin: ep.TLSPin}, "relay-memory")
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("connect the memory service to the hub: %w", err)
	}
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	grp.Go(func() {
		defer close(done)
		_ = memory.Serve(mctx, nc, memory.DefaultSubjectPrefix, st)
	})
	return func() {
		cancel()
		<-done
		nc.Close()
		st.Close()
	}, nil
}

// close stops the hub this session runs, if any.
func (l *localHub) close() {
	l.mu.Lock()
	h, stop := l.h, l.stop
	l.h, l.stop = nil, nil
	l.mu.Unlock()
	if h == nil {
		return
	}
	stop()
	h.Shutdown()
}

//go:build !lean

package session

import (
	"context"
	"fmt"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
)

// startLocalHub runs the hub (and its memory service) inside this process
// and tells the human, who may expect it to outlive this program.
func (s *Session) startLocalHub(ctx context.Context) (hub.Endpoint, error) {
	h, err := hub.Start(ctx, hub.Options{Home: s.cfg.Home, Logger: s.log.With("from", "hub"),
		// Live before hub.json names the hub, as relay up's.
		Services: func(h *hub.Hub) (func(), error) {
			stop, err := serveMemory(ctx, h, s.grp)
			if err != nil {
				// Messages work without it; @memory says it is unavailable.
				s.log.Warn("the hub inside this program serves no memory", "err", err)
				return func() {}, nil
			}
			return stop, nil
		}})
	if err != nil {
		return hub.Endpoint{}, err
	}
	s.link.local.mu.Lock()
	s.link.local.stop = h.Shutdown // the memory service first
	s.link.local.mu.Unlock()
	s.log.Warn("no relay binary on PATH: the hub runs inside this program", "url", h.URL())
	if s.cfg.Stdout != nil {
		fmt.Fprintf(s.cfg.Stdout, "relay: no relay binary on PATH (or Options.Executable): the hub runs inside this program on %s and stops when it exits; `relay up --detach` runs one that stays.\r\n", h.URL())
	}
	return h.Endpoint(), nil
}

// serveMemory answers the memory service's requests on h, as relay up does,
// live when it returns.
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
	wait, err := memory.Start(mctx, nc, memory.DefaultSubjectPrefix, st)
	if err != nil {
		cancel()
		nc.Close()
		st.Close()
		return nil, fmt.Errorf("start the memory service: %w", err)
	}
	done := make(chan struct{})
	grp.Go(func() {
		defer close(done)
		_ = wait()
	})
	return func() {
		cancel()
		<-done
		nc.Close()
		st.Close()
	}, nil
}

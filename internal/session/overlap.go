// This file is the overlapped start: the name claim answered while the
// child already runs, and the gate that keeps the child's words from its
// peers until then.

package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/relayhq/relay/bus"
)

// claim is the answer to the session's first name claim. done is closed
// once it is known; err (nil: the name is the agent's, or the hub was not
// reached and relay keeps trying) is read only after done. cancel ends a
// claim still under way (closeAll).
type claim struct {
	done   chan struct{}
	once   sync.Once
	err    error
	cancel context.CancelFunc
}

func newClaim() *claim { return &claim{done: make(chan struct{}), cancel: func() {}} }

// settledClaim is the claim of a session whose name was claimed before its
// child started (or that has no hub): answered, nothing to wait for.
func settledClaim() *claim {
	c := newClaim()
	c.settle(nil)
	return c
}

// settle records the claim's answer; only the first counts.
func (c *claim) settle(err error) {
	c.once.Do(func() {
		c.err = err
		close(c.done)
	})
}

// wait waits for the answer, or for ctx; false when ctx ended first.
func (c *claim) wait(ctx context.Context) (error, bool) {
	select {
	case <-c.done:
		return c.err, true
	case <-ctx.Done():
		return nil, false
	}
}

// overlapStart says whether the child may start before the hub answered
// the name claim: only when nothing in its environment or arguments waits
// for that answer. A name chosen by relay (AutoName) may change with the
// claim (claude-2), and a model agent's primer names its peers, which the
// hub gives; both keep the claim first. An explicit name is final unless
// the claim fails, and then the session is refused before anything the
// child wrote reaches a peer (claimed).
func (s *Session) overlapStart() bool {
	if s.alone() || s.cfg.AutoName {
		return false
	}
	return !s.spec.prof.Model || s.cfg.NoPrimer
}

// beginClaim claims the name with c, connected with o, beside the
// starting child: the answer settles s.link.claim.
func (s *Session) beginClaim(ctx context.Context, c *bus.Client, o bus.Options) {
	cl := s.link.claim
	cctx, cancel := context.WithTimeout(ctx, connectWait)
	cl.cancel = cancel
	s.grp.Go(func() {
		defer cancel()
		cl.settle(s.register(cctx, c, o, s.cfg.Name))
	})
}

// refusal is what a failed first claim means: the error that refuses the
// session (a taken name; credentials or a hub that trying again would not
// change), or nil when the agent runs on alone while relay keeps trying
// (what the human is told then is said by joinFailed).
func (s *Session) refusal(err error) error {
	if errors.Is(err, bus.ErrNameTaken) {
		return fmt.Errorf("%w: the name %q is taken by a live agent in workspace %q: choose another with --name", ErrNameTaken, s.cfg.Name, s.cfg.Workspace)
	}
	return s.joinFailed(err)
}

// awaitClaim runs beside the child of an overlapped start: once the claim
// is answered, a refusal ends the child (end) and is kept for Run to
// return; what the outbox held meanwhile is dropped, never sent.
func (s *Session) awaitClaim(ctx context.Context, end func()) {
	err, ok := s.link.claim.wait(ctx)
	if !ok || err == nil {
		return
	}
	if r := s.refusal(err); r != nil {
		s.end.refused.Store(&r)
		s.link.out.mu.Lock()
		s.link.out.early, s.link.out.ended = nil, true
		s.link.out.mu.Unlock()
		s.log.Warn("refused while the agent started; ending it", "err", r)
		end()
	}
}

// claimed waits until the first claim is answered; false when the session
// was refused (or ctx ended): then nothing the child wrote may be acted on.
// The command handlers and the agent's own `relay send` wait here, so a
// refused session's words never reach a peer.
func (s *Session) claimed(ctx context.Context) bool {
	err, ok := s.link.claim.wait(ctx)
	if !ok {
		return false
	}
	return err == nil || (!errors.Is(err, bus.ErrNameTaken) && !fatalJoin(err))
}

package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/agents"

	"github.com/relayhq/relay/internal/delivery"
)

// queueTypist is the session as its delivery queue's Typist: typing.go types,
// the profile says whether the input box can confirm, a plain shell holds
// until it waits at its own prompt (shellstate.go), and the wrapper's input
// knows when the human last typed.
type queueTypist struct{ s *Session }

var _ delivery.Typist = queueTypist{}

func (t queueTypist) Type(ctx context.Context, in *delivery.Injection) error {
	if d := t.s.deliverer(); d != nil && (in.DirectOnly || d.Direct()) {
		err := t.s.deliverDirect(ctx, d, in)
		if err == nil {
			t.s.typed(in.Items)
			return nil
		}
		if in.DirectOnly || ctx.Err() != nil {
			// The human's draft or keys forbid typing now: back to the
			// queue, typed when they allow (the path says no meanwhile).
			return fmt.Errorf("%w: %w", delivery.ErrHeld, err)
		}
		t.s.log.Warn("the CLI did not take the prompt through its own input; typing it", "err", err)
	}
	if err := t.s.typeInjection(ctx, in); err != nil {
		return err
	}
	t.s.typed(in.Items)
	return nil
}

func (t queueTypist) Confirm(ctx context.Context, in *delivery.Injection) (bool, error) {
	if in.Direct {
		// Taken already; the CLI's record shows it reached the model.
		first, _, _ := strings.Cut(in.Text, "\n")
		err := t.s.waitPrompt(ctx, first, cmp.Or(t.s.typing.promptWait, promptWait))
		if errors.Is(err, errNoPrompt) {
			return false, nil
		}
		return err == nil, err
	}
	confirm := t.s.confirmer()
	if confirm == nil {
		return false, nil
	}
	err := confirm(ctx, in.Text)
	return err == nil, err
}

func (t queueTypist) Hold() string {
	t.s.readHeld()
	if t.s.spec.prof.Model {
		return t.s.submitHold()
	}
	return t.s.shellHold()
}

func (t queueTypist) LastHuman() time.Time { return t.s.child.in.LastHuman() }

// heldWait bounds how long readHeld waits for the scanner.
const heldWait = time.Second

// readHeld has the scanner read the output the tap holds back (a
// spinner's frames, scanner.CanWait) and the owner take the state it
// showed, before the delivery queue decides to type: a dialog or a draft
// drawn among held frames then holds a message typed into a busy agent
// (steer) as one drawn in plain sight does. Called on the queue's
// goroutine, never the owner's.
func (s *Session) readHeld() {
	if s.child.tap == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), heldWait)
	defer cancel()
	if s.child.tap.Release(ctx) {
		s.read(func(*state) {}) // the owner has taken the state the scanner told
	}
}

// deliverer is the exact source's own input path to the model (OpenCode's
// server), nil when it has none.
func (s *Session) deliverer() agents.Deliverer {
	d, _ := s.spec.src.(agents.Deliverer)
	return d
}

// deliverDirect gives the injection to the model through the CLI's own
// input path: nothing is typed, the human's draft stays as it is. The
// items are committed (journaled) only once the CLI accepted them.
func (s *Session) deliverDirect(ctx context.Context, d agents.Deliverer, in *delivery.Injection) error {
	if !d.Direct() {
		return errNoDirect
	}
	if err := d.Deliver(ctx, in.Text); err != nil {
		return err
	}
	in.Direct = true
	in.Commit()
	s.log.Info("delivered through the CLI's own input", "items", len(in.Items))
	return nil
}

// errNoDirect: the CLI's own input path is down or knows no session yet.
var errNoDirect = errors.New("the CLI's own input path is not available now")

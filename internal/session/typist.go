package session

import (
	"context"
	"time"

	"github.com/relayhq/relay/internal/delivery"
)

// queueTypist is the session as its delivery queue's Typist: typing.go types,
// the profile says whether the input box can confirm, a plain shell holds
// until it waits at its own prompt (shellstate.go), and the wrapper's input
// knows when the human last typed.
type queueTypist struct{ s *Session }

var _ delivery.Typist = queueTypist{}

func (t queueTypist) Type(ctx context.Context, in *delivery.Injection) error {
	if err := t.s.typeInjection(ctx, in); err != nil {
		return err
	}
	t.s.typed(in.Items)
	return nil
}

func (t queueTypist) Confirm(ctx context.Context, in *delivery.Injection) (bool, error) {
	confirm := t.s.confirmer()
	if confirm == nil {
		return false, nil
	}
	err := confirm(ctx, in.Text)
	return err == nil, err
}

func (t queueTypist) Hold() string {
	if t.s.spec.prof.Model {
		return ""
	}
	return t.s.shellHold()
}

func (t queueTypist) LastHuman() time.Time { return t.s.child.in.LastHuman() }

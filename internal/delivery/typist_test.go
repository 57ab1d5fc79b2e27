package delivery

import (
	"context"
	"time"
)

// The test typists' answers besides typing: no confirmation, no hold, a
// human who never typed.

func (ty *typist) Confirm(context.Context, *Injection) (bool, error) { return false, nil }
func (ty *typist) Hold() string                                      { return "" }
func (ty *typist) LastHuman() time.Time                              { return time.Time{} }

// with is a test Typist: the typing of Typist, the other answers given
// where set.
type with struct {
	Typist
	confirm   func(ctx context.Context, text string) error
	hold      func() string
	lastHuman func() time.Time
}

func (w with) Confirm(ctx context.Context, in *Injection) (bool, error) {
	if w.confirm == nil {
		return w.Typist.Confirm(ctx, in)
	}
	err := w.confirm(ctx, in.Text)
	return err == nil, err
}

func (w with) Hold() string {
	if w.hold == nil {
		return w.Typist.Hold()
	}
	return w.hold()
}

func (w with) LastHuman() time.Time {
	if w.lastHuman == nil {
		return w.Typist.LastHuman()
	}
	return w.lastHuman()
}

// typeFunc is a Typist that types with a function.
type typeFunc func(ctx context.Context, in *Injection) error

func (f typeFunc) Type(ctx context.Context, in *Injection) error   { return f(ctx, in) }
func (typeFunc) Confirm(context.Context, *Injection) (bool, error) { return false, nil }
func (typeFunc) Hold() string                                      { return "" }
func (typeFunc) LastHuman() time.Time                              { return time.Time{} }

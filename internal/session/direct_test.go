package session

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/patterns"
)

// directSource is an exact source with its CLI's own input path
// (agents.Deliverer), answering as told.
type directSource struct {
	up  bool
	err error

	mu    sync.Mutex
	posts []string
}

func (d *directSource) Run(ctx context.Context, _ agents.Sink) error { <-ctx.Done(); return nil }
func (d *directSource) Screen(patterns.Command) bool                 { return true }
func (d *directSource) Active() bool                                 { return true }
func (d *directSource) Idle()                                        {}
func (d *directSource) Direct() bool                                 { return d.up }
func (d *directSource) Deliver(_ context.Context, text string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.posts = append(d.posts, text)
	return d.err
}

// TestTypeThroughDirectPath: with a source that has its CLI's own input
// path, the session's typist posts instead of typing; a post the CLI did
// not take is typed instead when typing is allowed, and put back to the
// queue (ErrHeld) when only the direct path was (the human's draft):
// never typed into the human's line, never both posted and typed.
func TestTypeThroughDirectPath(t *testing.T) {
	refused := errors.New("refused")
	for _, tc := range []struct {
		name       string
		up         bool
		err        error
		directOnly bool
		posted     int
		typed      bool
		held       bool
	}{
		{name: "posted", up: true, posted: 1},
		{name: "posted past a draft", up: true, directOnly: true, posted: 1},
		{name: "post refused: typed instead", up: true, err: refused, posted: 1, typed: true},
		{name: "post refused past a draft: held", up: true, err: refused, directOnly: true, posted: 1, held: true},
		{name: "path down: typed", typed: true},
		{name: "path down past a draft: held", directOnly: true, held: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &directSource{up: tc.up, err: tc.err}
			scr, in := &fakeScreen{}, &fakeTypist{}
			s := &Session{spec: spec{prof: agents.Profile{Model: true}, src: src}, child: child{scr: scr, in: in},
				log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			injection := &delivery.Injection{Text: "[relay] Message from agent Bob (id m1).\n│ hi", DirectOnly: tc.directOnly}
			err := queueTypist{s}.Type(context.Background(), injection)
			if got := errors.Is(err, delivery.ErrHeld); got != tc.held {
				t.Fatalf("err %v, held %v, want %v", err, got, tc.held)
			}
			if !tc.held && err != nil {
				t.Fatal(err)
			}
			if len(src.posts) != tc.posted {
				t.Errorf("%d posts, want %d", len(src.posts), tc.posted)
			}
			if got := strings.Contains(in.String(), "hi"); got != tc.typed {
				t.Errorf("typed %q, want typed %v", in.String(), tc.typed)
			}
			if want := tc.posted == 1 && tc.err == nil; injection.Direct != want {
				t.Errorf("Direct %v, want %v", injection.Direct, want)
			}
		})
	}
}

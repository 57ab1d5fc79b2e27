package session

import (
	"context"
	"github.com/relayhq/relay/internal/mailbox"
	"log/slog"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/scanner"
)

// screenPub is the screen publisher: it shows the agent's screen, as
// text, to whoever watches it on the hub (the dashboard). Its goroutine
// (publishScreen) is the only reader of both channels. They are tokens,
// not queues: changed has one when the child wrote since the publisher
// last looked, watch one when a viewer asked for the screen; what is
// published is always the screen as it is then.
type screenPub struct {
	changed mailbox.Signal
	watch   mailbox.Signal
}

func newScreenPub() screenPub {
	return screenPub{changed: mailbox.NewSignal(), watch: mailbox.NewSignal()}
}

// notifying is a Source that leaves a token in wake at each chunk.
type notifying struct {
	scanner.Source
	wake mailbox.Signal
}

func (n notifying) Next(ctx context.Context) ([]byte, int64, error) {
	chunk, skipped, err := n.Source.Next(ctx)
	if len(chunk) > 0 || skipped > 0 {
		n.wake.Notify()
	}
	return chunk, skipped, err
}

// screenEvery is how often the agent's screen is published for the
// dashboard, when it changed.
const screenEvery = 500 * time.Millisecond

// publishScreen shows the agent's current screen, as text, to whoever
// watches it (the dashboard): only while a viewer has asked within
// bus.ScreenWatchFor, at once when asked, then at most twice a second and
// only on change. Unwatched, a spinner's redraws cost no wake-up here.
func (s *Session) publishScreen(ctx context.Context, scr screenModel, size func() (int, int)) {
	s.link.screen.run(ctx, scr, size, s.link.client.Load, s.log)
}

// run is the publisher's goroutine (see publishScreen): client is the
// hub's client now, nil while there is none.
func (p screenPub) run(ctx context.Context, scr screenModel, size func() (int, int), client func() *bus.Client, log *slog.Logger) {
	t := time.NewTicker(screenEvery)
	defer t.Stop()
	var last string
	var until time.Time // watched until then
	for {
		var out mailbox.Signal // output wakes it only while watched
		if time.Now().Before(until) {
			out = p.changed
		}
		select {
		case <-ctx.Done():
			return
		case <-p.watch:
			until = time.Now().Add(bus.ScreenWatchFor)
			last = "" // a new viewer needs the screen now, changed or not
		case <-out:
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		c := client()
		if c == nil {
			continue
		}
		text := scr.Text()
		if text == last {
			continue
		}
		last = text
		cols, rows := size()
		if err := c.PublishScreen(bus.Screen{Cols: cols, Rows: rows, Text: text, At: time.Now()}); err != nil {
			log.Debug("publish screen", "err", err)
		}
	}
}

// watchScreen takes c's viewers' asks for the agent's screen (a client of
// its own for each link to the hub: the subscription ends with it).
func (s *Session) watchScreen(c *bus.Client) {
	if _, err := c.OnScreenWatch(s.link.screen.watch.Notify); err != nil {
		s.log.Warn("the dashboard cannot ask for the screen", "err", err)
	}
}

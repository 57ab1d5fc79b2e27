package claude

import (
	"context"
	"time"

	"github.com/relayhq/relay/internal/agents"
)

// turnQuiet is how long a turn the hooks called busy may go without a
// hook before relay stops taking their word for it. Claude Code runs each
// hook with a time limit, and on a loaded machine relay's hook process may
// be killed before it reaches the wrapper: a lost Stop would leave the
// agent busy, and its inbox deaf, until its next hook, which may never
// come. Past turnQuiet the screen says when the turn ends ("esc to
// interrupt" shows while Claude Code works, tools included); the next
// hook takes the turns back. A dialog the hooks reported is waited on
// without limit: it waits for the human.
const turnQuiet = 30 * time.Second

// heard notes that a hook arrived, for the quiet watch.
func (h *hooks) heard() {
	select {
	case h.beat <- struct{}{}:
	default:
	}
}

// report tells the session the turn t, as the hooks see it: it takes the
// turns back from the screen if the quiet watch gave them away.
func (h *hooks) report(sink agents.Sink, t agents.Turn) {
	h.mu.Lock()
	h.busy = t.Exact && t.Busy
	h.screenTurns = false
	h.mu.Unlock()
	h.heard()
	sink.Turn(t)
}

// watchQuiet hands the turns to the screen when a busy turn has had no
// hook for turnQuiet, until ctx ends.
func (h *hooks) watchQuiet(ctx context.Context, sink agents.Sink) {
	quiet := h.quiet
	if quiet <= 0 {
		quiet = turnQuiet
	}
	t := time.NewTimer(quiet)
	t.Stop()
	for {
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-h.beat:
			t.Reset(quiet)
		case <-t.C:
			give, wait := h.quietTurn()
			if wait {
				t.Reset(quiet) // a dialog: look again once the human answered
			}
			if give {
				h.log.Warn("no hook from Claude Code in a busy turn; its screen says when the turn ends until the next hook", "quiet for", quiet)
				sink.Turn(agents.Turn{})
			}
		}
	}
}

// quietTurn decides, when a busy turn has had no hook for a while,
// whether the screen takes the turns (give) or the watch looks again
// later (wait: a dialog is open, which waits for the human).
func (h *hooks) quietTurn() (give, wait bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != hooksOn || !h.busy || h.screenTurns {
		return false, false
	}
	if len(h.asks) > 0 {
		return false, true
	}
	h.screenTurns = true
	return true, false
}

// Idle reads the transcript when the screen, not a Stop hook, said the
// turn ended (the quiet watch gave it the turns): the reply's last texts
// are handed over as a Stop would have, and once more a moment later, as
// Claude Code writes a turn's last records late. Otherwise it does
// nothing: the Stop hook says when a turn ends.
func (h *hooks) Idle() {
	h.mu.Lock()
	screen, sink, ctx := h.screenTurns, h.sink, h.ctx
	h.mu.Unlock()
	if !screen || sink == nil {
		return
	}
	h.read(nil)
	sink.Go(func() {
		select {
		case <-time.After(LateRead):
			h.read(nil)
		case <-ctx.Done():
		}
	})
}

package delivery

import (
	"context"
	"errors"
	"time"
)

// ErrHeld, wrapped in what Type returns, says that nothing of the
// injection reached the agent and that its items go back to the front of
// the queue, to wait for the next moment the queue would deliver them:
// they neither fail nor count as typed (a direct delivery the CLI refused
// while the human's draft forbids typing).
var ErrHeld = errors.New("not delivered; held for the next moment")

// Typist is the queue's one way to reach its agent: it types, and it
// answers what the queue asks before and after.
type Typist interface {
	// Type types in.Text into the agent (paste, settle, Enter) and calls
	// in.Commit right after its last write. An error is retried
	// (Options.Retries), then the items fail.
	Type(ctx context.Context, in *Injection) error
	// Confirm checks, after Type, that the agent took in.Text: true
	// confirms the items; false with a nil error means it cannot tell
	// (they stay delivered); an error fails them with its text.
	Confirm(ctx context.Context, in *Injection) (bool, error)
	// Hold is asked right before an injection that would go now (the
	// agent ready and idle, the human quiet), unless it is pipelined
	// behind one the agent has not shown it took: a reason other than ""
	// keeps everything waiting, and Hold is asked again every
	// Options.HoldPoll while something waits (a plain shell: is the shell
	// itself at its primary prompt). It must not call the queue.
	Hold() string
	// LastHuman returns when the human last typed (the zero Time if
	// never): nothing is typed until Options.HumanQuiet has passed since.
	LastHuman() time.Time
}

// Injection is one text the queue hands its Typist: the items typed
// together, joined.
type Injection struct {
	Text  string
	Items []Item // in order (for the log: which messages went in together)
	// N numbers the injections from 1 as they are handed out (for
	// Queue.SettledThrough). Pipelined says it is typed while the agent
	// has not shown yet that it took the one before (Options.Pipeline):
	// what its screen shows now is that one's echo.
	N         uint64
	Pipelined bool
	// DirectOnly is set by the queue when the agent's state allows this
	// injection only through the CLI's own input path (Options.Direct):
	// the human's draft or recent keys forbid typing now, so Type must
	// not type it (ErrHeld when the direct path fails).
	DirectOnly bool
	// Direct is set by Type when it delivered the text through the CLI's
	// own input path instead of typing it: Confirm looks for it in the
	// CLI's record, not in its input box.
	Direct bool

	commit func()
}

// Commit tells the queue that the text has reached the agent: the queue
// journals the items as typed now, so that a crash from here on never
// types them again. Type calls it right after its last write; an
// injection whose Type never calls it is journaled when Type returns.
// Only the first call counts; an Injection the queue did not make (typed
// outside it) commits nothing.
func (in *Injection) Commit() {
	if in.commit != nil {
		in.commit()
	}
}

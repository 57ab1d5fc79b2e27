package delivery

import (
	"context"
	"time"
)

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

// Package delivery decides when and how text is typed into an agent: it
// waits until the agent is idle, holds no draft of the human's and the human
// has stopped typing, then types pending messages (everything pending as one
// injection within a byte cap, or one at a time) through the wrapper's
// single stdin writer, and reports each message's fate: delivered,
// confirmed or failed.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/relayhq/relay/internal/mailbox"
)

// Mode says how pending messages are typed.
type Mode string

const (
	// ModeBatch types everything pending at an idle moment as one
	// injection: the items in order, joined by Options.Join, at most
	// Options.MaxInjection bytes; what does not fit goes at the next idle
	// moment (the default). An agent back from a long turn sees every
	// message that came meanwhile at once, in one prompt.
	ModeBatch Mode = "batch"
	// ModeWait types one message at each idle moment.
	ModeWait Mode = "wait"
	// ModeQueue types like ModeBatch ("followUp" is an alias). It is kept
	// as a name of its own for configurations that spell it.
	ModeQueue Mode = "queue"
	// ModeSteer types at once, even while the agent works (it may
	// interrupt), batched like ModeBatch; the human's draft and typing
	// still hold it back.
	ModeSteer Mode = "steer"
)

// DefaultMode is the mode when none is configured.
const DefaultMode = ModeBatch

// DefaultJoin separates the items of one injection when Options.Join is
// empty: a blank line, for a model CLI's input box.
const DefaultJoin = "\n\n"

// DefaultMaxInjection caps the bytes of one joined injection when
// Options.MaxInjection is zero: four full-size messages (DefaultMaxBody).
// A caller typing into a plain shell passes its own cap.
const DefaultMaxInjection = 4 * DefaultMaxBody

// DefaultHumanQuiet is how long the human must not have typed before
// anything is typed in, unless configured.
const DefaultHumanQuiet = 2 * time.Second

// ParseMode reads a mode's name exactly as configuration and the
// --delivery flag spell it (batch, wait, queue, followUp, steer); empty is
// DefaultMode. It is the one parser of modes, so a file and a flag accept
// the same names.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "":
		return DefaultMode, nil
	case "batch":
		return ModeBatch, nil
	case "wait":
		return ModeWait, nil
	case "queue", "followUp":
		return ModeQueue, nil
	case "steer":
		return ModeSteer, nil
	}
	return "", fmt.Errorf("unknown delivery mode %q (want batch, wait, queue, followUp or steer)", s)
}

// Status is a message's delivery status, as its receipt reports it.
type Status string

const (
	StatusDelivered Status = "delivered" // typed in
	StatusConfirmed Status = "confirmed" // seen by the agent
	StatusFailed    Status = "failed"    // given up, with a reason
)

// State is what the agent looks like now, from its screen or its hooks.
type State struct {
	Ready   bool // started and able to take input
	Busy    bool // working on a turn
	Draft   bool // its input box holds text (the human's)
	Waiting bool // waiting on the human (a permission prompt)
}

// Item is one thing to type in. Text is final (formatted and sanitised).
type Item struct {
	ID   string
	Text string
	// Done is called with each status change (delivered, then confirmed,
	// or failed with a reason). It may be nil.
	Done func(st Status, reason string)
}

// Clock is time as the queue sees it; tests pass a fake one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options configures a Queue; zero values mean defaults.
type Options struct {
	Mode Mode
	// Join separates the items typed as one injection (every mode but
	// ModeWait); DefaultJoin ("\n\n") when empty. A plain shell, where
	// each message must be a line of its own, wants "\r".
	Join string
	// MaxInjection caps the bytes of one injection: the items' texts and
	// the separators between them (the Enter the typist presses after it
	// is not counted). Items that do not fit wait for the next idle moment,
	// in order; a single item longer than the cap is typed alone, whole.
	// DefaultMaxInjection when zero; a negative value means no cap.
	MaxInjection int
	// HumanQuiet is how long the human must not have typed; 2s by default.
	HumanQuiet time.Duration
	// Recheck bounds how long the queue waits, after typing, for the agent
	// to show a new idle moment before it looks again; 3s by default.
	Recheck time.Duration
	// Pipeline is how many injections may be typed, one after the other,
	// before the agent shows it took them (Settled, or a reaction and a
	// new idle moment): 1 (the default) waits after each. More suits a
	// program that reads lines from its terminal (a plain shell), whose
	// line discipline queues complete lines it has not read yet: the next
	// injection goes while the echo of the one before is on its way, and
	// Settled, the sign that the last one was taken, stands for all of
	// them. Each injection stays within MaxInjection. ModeWait never
	// pipelines: it types one message per idle moment.
	Pipeline int
	// Fits, when set, says whether texts may be typed as one injection
	// (joined by Join), besides MaxInjection: the first item always goes,
	// alone if need be. A plain shell's line editor must show the whole
	// injection on its screen (see session's pasteFits). It is called
	// with the queue's lock held: it must be quick and must not call the
	// queue.
	Fits func(texts []string) bool
	// HoldPoll is how often Typist.Hold is asked again while something
	// waits; 100ms by default.
	HoldPoll time.Duration
	// Typist types into the agent. Required.
	Typist Typist
	// Direct, when set, reports whether the Typist can deliver now
	// without typing into the agent's input (the CLI's own input path,
	// OpenCode's server): then the human's draft and recent keys do not
	// hold delivery back, since nothing is typed where they type. The
	// agent must still be ready, not waiting on its human and, but in
	// ModeSteer, not busy. It is called with the queue's lock held: it
	// must be quick and must not call the queue.
	Direct func() bool
	// Journal remembers what was typed, across crashes; nil keeps nothing.
	Journal *Journal
	// Retries is how often typing is retried before the items fail; 2 by
	// default.
	Retries int
	Clock   Clock
}

func (o *Options) fill() {
	if o.Mode == "" {
		o.Mode = DefaultMode
	}
	if o.Join == "" {
		o.Join = DefaultJoin
	}
	if o.MaxInjection == 0 {
		o.MaxInjection = DefaultMaxInjection
	}
	if o.HumanQuiet == 0 {
		o.HumanQuiet = DefaultHumanQuiet
	}
	if o.Recheck == 0 {
		o.Recheck = 3 * time.Second
	}
	if o.Pipeline <= 0 || o.Mode == ModeWait {
		o.Pipeline = 1
	}
	if o.HoldPoll <= 0 {
		o.HoldPoll = 100 * time.Millisecond
	}
	if o.Retries == 0 {
		o.Retries = 2
	}
	if o.Clock == nil {
		o.Clock = realClock{}
	}
}

// Queue holds what waits to be typed into one agent. It is safe for
// concurrent use; Run does the typing.
type Queue struct {
	o    Options
	wake mailbox.Signal // the items or the state changed

	mu    sync.Mutex
	items []Item
	ids   ids // which ids wait, are being typed, or were typed
	state State
	// Injections are numbered from 1 as they are handed to Type: seq is
	// the last one handed out, typed the last one Type returned from, and
	// seen the last one the agent showed it took (Settled, a reaction, or
	// Recheck passed). typed-seen injections wait to be seen.
	seq, typed, seen uint64
	typedAt          time.Time // when the last injection was typed
}

// NewQueue returns a queue; call Run to start delivering.
func NewQueue(o Options) *Queue {
	o.fill()
	return &Queue{o: o, wake: mailbox.NewSignal(), ids: newIDs(o.Journal)}
}

// Add queues an item. Items are told apart by ID (an empty ID is never a
// repeat), so that a message the hub delivers again (after its ack wait ran
// out during a stall, a partition or a suspend) is typed once:
//   - an ID already typed (in this process or, through the journal, before
//     a restart) is reported delivered at once with reason AlreadyDelivered
//     and not typed;
//   - an ID that waits in the queue, or is being typed or handed over right
//     now, is merged into that item: the new Done receives the same
//     statuses as the first item's from then on (delivered, confirmed or
//     failed), so that the copy delivered again is acknowledged too.
func (q *Queue) Add(it Item) {
	q.AddAll([]Item{it})
}

// AddAll queues items in order, at once: a batch the inbox fetched in one
// pull is typed as one injection (within the cap) even when the agent is
// idle, instead of its first item alone while the rest are still being
// added. Each item is told apart by ID as Add does.
func (q *Queue) AddAll(items []Item) {
	var typed []Item
	added := false
	q.mu.Lock()
	for _, it := range items {
		switch q.ids.state(it.ID) {
		case idTyped:
			typed = append(typed, it)
		case idInFlight:
			q.ids.follow(it.ID, it.Done)
		case idWaiting:
			for i := range q.items {
				if q.items[i].ID == it.ID {
					q.items[i].Done = both(q.items[i].Done, it.Done)
					break
				}
			}
		default:
			q.ids.wait(it.ID)
			q.items = append(q.items, it)
			added = true
		}
	}
	q.mu.Unlock()
	report(typed, StatusDelivered, AlreadyDelivered)
	if added {
		q.poke()
	}
}

// SetState records the agent's state (from its screen or hooks).
func (q *Queue) SetState(s State) {
	q.mu.Lock()
	if s.Busy || s.Draft || s.Waiting {
		// The agent reacted to what was typed; its next idle is new.
		q.seen = max(q.seen, q.typed)
	}
	q.state = s
	q.mu.Unlock()
	q.poke()
}

// Settled tells the queue that the agent is ready for more after the last
// injection, by a signal of its own that the caller trusts more than a new
// idle moment (a plain shell echoed the typed line and its prompt is back):
// the queue stops waiting for the agent to show a reaction and types what
// waits as soon as the state allows. Called while an injection is still
// being typed, it applies to that injection's end.
func (q *Queue) Settled() {
	q.mu.Lock()
	q.seen = q.seq
	q.mu.Unlock()
	q.poke()
}

// SettledThrough is Settled for injection n (see Injection) and those
// before it: the ones typed after it still wait to be seen. A pipelining
// caller says which injection its signal is for, so that the sign of an
// earlier one, late, does not count for the one being typed.
func (q *Queue) SettledThrough(n uint64) {
	q.mu.Lock()
	q.seen = max(q.seen, min(n, q.seq))
	q.mu.Unlock()
	q.poke()
}

// Pending returns how many items wait.
func (q *Queue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

func (q *Queue) poke() { q.wake.Notify() }

// Run delivers items until ctx is done.
func (q *Queue) Run(ctx context.Context) error {
	for {
		batch, wait, directOnly := q.nextDirect()
		if batch == nil {
			var timer <-chan time.Time
			if wait > 0 {
				timer = q.o.Clock.After(wait)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-q.wake:
			case <-timer:
			}
			continue
		}
		if held := q.deliverAs(ctx, batch, directOnly); held {
			// Put back: look again after a pause, not at once (the
			// Typist's direct path says it is down by then).
			select {
			case <-ctx.Done():
			case <-q.o.Clock.After(q.o.HoldPoll):
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// next returns the items to type now, or nil and how long to wait before
// looking again (0: until something changes).
func (q *Queue) next() ([]Item, time.Duration) {
	batch, wait, _ := q.nextDirect()
	return batch, wait
}

// nextDirect is next, and whether only the direct path may take the
// batch (Injection.DirectOnly).
func (q *Queue) nextDirect() ([]Item, time.Duration, bool) {
	q.mu.Lock()
	wait, due, pipelined, _ := q.due()
	q.mu.Unlock()
	if !due {
		return nil, wait, false
	}
	if !pipelined {
		// Asked without the lock: Hold reads the agent's terminal.
		if why := q.o.Typist.Hold(); why != "" {
			return nil, q.o.HoldPoll, false
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var directOnly bool
	if wait, due, _, directOnly = q.due(); !due {
		return nil, wait, false
	}
	n := 1
	if q.o.Mode != ModeWait {
		n = fit(q.items, len(q.o.Join), q.o.MaxInjection)
		n = fitShown(q.items[:n], q.o.Fits)
	}
	batch := q.items[:n:n]
	q.items = q.items[n:]
	for _, it := range batch {
		q.ids.fly(it.ID)
	}
	q.seq++
	return batch, 0, directOnly
}

// due reports whether the first items may be typed now, whether they
// would be pipelined behind an injection not seen yet and whether only
// the direct path may take them (Injection.DirectOnly); else how long to
// wait before looking again (0: until something changes). q.mu is held.
func (q *Queue) due() (wait time.Duration, due, pipelined, directOnly bool) {
	if len(q.items) == 0 {
		return 0, false, false, false
	}
	now := q.o.Clock.Now()
	s := q.state
	direct := q.o.Direct != nil && q.o.Direct()
	switch {
	case !s.Ready, s.Waiting:
		return 0, false, false, false
	case s.Draft && !direct:
		return 0, false, false, false
	case s.Busy && q.o.Mode != ModeSteer:
		return 0, false, false, false
	}
	if q.typed-min(q.seen, q.typed) >= uint64(q.o.Pipeline) {
		if left := q.typedAt.Add(q.o.Recheck).Sub(now); left > 0 {
			return left, false, false, false
		}
		q.seen = q.typed
	}
	directOnly = s.Draft
	if left := q.o.Typist.LastHuman().Add(q.o.HumanQuiet).Sub(now); left > 0 {
		if !direct {
			return left, false, false, false
		}
		directOnly = true
	}
	return 0, true, q.seen < q.typed, directOnly
}

// deliver types a batch as one injection and reports its fate.
func (q *Queue) deliver(ctx context.Context, batch []Item) { q.deliverAs(ctx, batch, false) }

// deliverAs is deliver for a batch the state allows only through the
// direct path when directOnly; held says the Typist put it back (ErrHeld).
func (q *Queue) deliverAs(ctx context.Context, batch []Item, directOnly bool) (held bool) {
	// The journal is written when Type commits (Commit, the moment its last
	// byte is written), not after what Type does next: the shorter the
	// time between the child taking the text and the journal, the smaller
	// the chance that a crash types it twice; a failure before it never
	// counts the batch typed.
	var jerr error
	committed := false
	in := &Injection{Text: join(batch, q.o.Join), Items: batch, DirectOnly: directOnly}
	in.commit = func() {
		if !committed {
			committed, jerr = true, q.mark(batch)
		}
	}
	q.mu.Lock()
	in.N, in.Pipelined = q.seq, q.seen < q.typed
	q.mu.Unlock()
	var err error
	for try := 0; try <= q.o.Retries; try++ {
		if err = q.o.Typist.Type(ctx, in); err == nil || ctx.Err() != nil || errors.Is(err, ErrHeld) {
			break
		}
	}
	if errors.Is(err, ErrHeld) && ctx.Err() == nil {
		q.Requeue(batch)
		return true
	}
	q.mu.Lock()
	q.typed, q.typedAt = q.seq, q.o.Clock.Now()
	q.mu.Unlock()
	if err != nil {
		// Not typed: copies that came meanwhile share the failure (the
		// caller has the hub bring the message back).
		report(q.land(batch, false), StatusFailed, fmt.Sprintf("typing failed: %v", err))
		return false
	}
	// Journal first (if Type never committed), then forget the ids as in
	// flight: an Add in between finds the id typed, never neither.
	reason := ""
	if !committed {
		jerr = q.mark(batch)
	}
	if jerr != nil {
		// Typed all the same; a crash now could type it twice.
		reason = "journal: " + jerr.Error()
	}
	all := q.land(batch, true)
	report(all, StatusDelivered, reason)
	ok, cerr := q.o.Typist.Confirm(ctx, in)
	switch {
	case errors.Is(cerr, context.Canceled):
	case cerr != nil:
		report(all, StatusFailed, "not confirmed: "+cerr.Error())
	case ok:
		report(all, StatusConfirmed, "")
	}
	return false
}

// mark records the ids of batch as typed in the journal, if there is one.
func (q *Queue) mark(batch []Item) error {
	if q.o.Journal == nil {
		return nil
	}
	ids := make([]string, 0, len(batch))
	for _, it := range batch {
		if it.ID != "" {
			ids = append(ids, it.ID)
		}
	}
	return q.o.Journal.Mark(ids...)
}

// land ends the flight of batch (typed or not) and returns it with the
// copies merged into it meanwhile, each as an item of its own.
func (q *Queue) land(batch []Item, typed bool) []Item {
	q.mu.Lock()
	defer q.mu.Unlock()
	all := batch
	for _, it := range batch {
		for _, done := range q.ids.land(it.ID, typed) {
			all = append(all, Item{ID: it.ID, Text: it.Text, Done: done})
		}
	}
	return all
}

func report(batch []Item, st Status, reason string) {
	for _, it := range batch {
		if it.Done != nil {
			it.Done(st, reason)
		}
	}
}

// Take removes and returns every pending item, for a caller that hands them
// over another way (Claude Code's Stop hook). The caller reports their fate
// through each item's Done, and gives back with Requeue what it could not
// hand over.
//
// Until Requeue or Handed, the items count as being typed: a copy of one
// that arrives meanwhile is merged into it (see Add).
func (q *Queue) Take() []Item {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	for _, it := range items {
		q.ids.fly(it.ID)
	}
	return items
}

// Requeue puts items back at the front of the queue, in order. Copies
// merged into them since Take follow them back; an item whose ID was typed
// meanwhile is reported delivered (AlreadyDelivered) instead.
func (q *Queue) Requeue(items []Item) {
	if len(items) == 0 {
		return
	}
	q.mu.Lock()
	back := make([]Item, 0, len(items))
	var typed []Item
	for _, it := range items {
		for _, done := range q.ids.land(it.ID, false) {
			it.Done = both(it.Done, done)
		}
		switch q.ids.state(it.ID) {
		case idTyped:
			typed = append(typed, it)
			continue
		case idWaiting:
			// Queued again meanwhile under the same id: one copy is enough.
			for i := range q.items {
				if q.items[i].ID == it.ID {
					q.items[i].Done = both(it.Done, q.items[i].Done)
				}
			}
			continue
		}
		q.ids.wait(it.ID)
		back = append(back, it)
	}
	q.items = append(back, q.items...)
	q.mu.Unlock()
	report(typed, StatusDelivered, AlreadyDelivered)
	q.poke()
}

// Handed records items handed over another way as typed (in the journal)
// and reports them delivered and confirmed: the agent's own hook took them.
func (q *Queue) Handed(items []Item) {
	reason := ""
	if err := q.mark(items); err != nil {
		reason = "journal: " + err.Error()
	}
	all := q.land(items, true)
	report(all, StatusDelivered, reason)
	report(all, StatusConfirmed, "")
}

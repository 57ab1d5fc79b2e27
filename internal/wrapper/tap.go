package wrapper

import (
	"context"
	"io"
	"slices"
	"sync"

	"github.com/relayhq/relay/internal/mailbox"
)

// DefaultTapLimit is how many bytes a Tap holds for a slow reader before it
// drops the oldest ones. 1 MiB is many full screens of the busiest TUI
// redraws, and small next to a 40 MB memory budget.
const DefaultTapLimit = 1 << 20

// tapGrowAll: a tap whose pending bytes grow past this grows to its limit
// at once.
const tapGrowAll = 64 << 10

// A Tap hands a copy of the child's output to one reader (the screen model)
// without ever making the pass-through path wait. Write never blocks; when
// the reader falls behind and more than the limit is pending, the oldest
// pending bytes are dropped and counted, so the reader can reset its model
// and carry on from the newest bytes.
type Tap struct {
	mu      sync.Mutex
	pending []byte // bytes written and not yet taken by Next
	spare   []byte // the buffer Next handed out last time, reused next
	skipped int64  // bytes dropped since the last Next
	total   int64  // bytes dropped since the tap was made
	limit   int
	closed  bool
	notes   []tapNote      // calls due at positions in pending, in order
	waits   []tapWait      // calls due after line feeds not written yet
	ready   mailbox.Signal // has a token when pending or closed changed
	hold    tapHold        // holding back output the reader can take later (SetHold)
	parked  bool           // Next waits for output (tests wait for it)
}

// tapWait is a call due after the reader has taken lines more line feeds,
// or bytes more bytes, whichever comes first (NoteAfterLines).
type tapWait struct {
	lines, bytes int
	fn           func()
}

// tapNote is a call due once the reader has taken every byte before at.
type tapNote struct {
	at int // index into pending
	fn func()
}

// NewTap returns a Tap that holds at most limit bytes (DefaultTapLimit when
// limit <= 0).
func NewTap(limit int) *Tap {
	if limit <= 0 {
		limit = DefaultTapLimit
	}
	return &Tap{limit: limit, ready: mailbox.NewSignal()}
}

// Write copies p into the tap. It never blocks and never fails; after Close
// it discards p.
func (t *Tap) Write(p []byte) (int, error) {
	n := len(p)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return n, nil
	}
	if len(t.pending)+len(p) > t.limit {
		// Skip ahead: the reader gets the newest bytes, never stale ones.
		t.drop(int64(len(t.pending)))
		t.pending = t.pending[:0]
		for i := range t.notes {
			t.notes[i].at = 0 // due before what is left
		}
		if len(p) > t.limit {
			t.drop(int64(len(p) - t.limit))
			p = p[len(p)-t.limit:]
		}
	}
	t.placeWaits(p)
	if need := len(t.pending) + len(p); need > cap(t.pending) && need > tapGrowAll {
		// The reader is behind by more than a pump's hand-over (a flood,
		// which it leaves to pile up): room for the limit at once, not a
		// quarter more at a time, each a new allocation whose pages the
		// kernel faults in and clears again (issue 34: about 2,000 page
		// faults in a 50 MB cat).
		grown := make([]byte, len(t.pending), t.limit)
		copy(grown, t.pending)
		t.pending = grown
	}
	held := t.hold.keep(p, len(t.notes) == 0 && len(t.waits) == 0 && t.skipped == 0)
	t.pending = append(t.pending, p...)
	t.mu.Unlock()
	if !held {
		t.ready.Notify()
	}
	return n, nil
}

// placeWaits turns the waits that p completes into notes at their place
// in p, which is about to be appended to pending. Called with t.mu held.
func (t *Tap) placeWaits(p []byte) {
	if len(t.waits) == 0 {
		return
	}
	kept := t.waits[:0]
	for _, w := range t.waits {
		at := -1
		for i, b := range p {
			w.bytes--
			if b == '\n' {
				w.lines--
			}
			if w.lines <= 0 || w.bytes <= 0 {
				at = i + 1
				break
			}
		}
		if at < 0 {
			kept = append(kept, w)
			continue
		}
		t.notes = append(t.notes, tapNote{at: len(t.pending) + at, fn: w.fn})
	}
	t.waits = kept
	slices.SortStableFunc(t.notes, func(a, b tapNote) int { return a.at - b.at })
}

func (t *Tap) drop(n int64) {
	t.skipped += n
	t.total += n
}

// Next waits for output and returns all of it, with the number of bytes
// dropped before it since the previous call (the reader should reset its
// model when that is not zero). The chunk is valid until the next call to
// Next. After Close, Next returns what is left, then io.EOF.
func (t *Tap) Next(ctx context.Context) (chunk []byte, skipped int64, err error) {
	for {
		t.mu.Lock()
		if len(t.notes) > 0 && t.notes[0].at == 0 && t.skipped == 0 {
			// Every byte before the note was taken (and handled: Next
			// is called again only after): run it now.
			fn := t.notes[0].fn
			t.notes = t.notes[1:]
			t.mu.Unlock()
			fn()
			continue
		}
		if len(t.pending) > 0 || t.skipped > 0 {
			t.hold.taken()
			chunk = t.pending
			end := len(chunk)
			if len(t.notes) > 0 {
				end = t.notes[0].at
				for i := range t.notes {
					t.notes[i].at -= end
				}
			}
			t.pending = append(t.spare[:0], chunk[end:]...)
			chunk = chunk[:end]
			t.spare = chunk
			skipped, t.skipped = t.skipped, 0
			t.mu.Unlock()
			return chunk, skipped, nil
		}
		closed, due := t.closed, t.hold.due()
		if !closed {
			t.parked = true
		}
		t.mu.Unlock()
		if closed {
			return nil, 0, io.EOF
		}
		select {
		case <-t.ready:
			t.unpark(false)
		case <-due:
			t.unpark(true)
		case <-ctx.Done():
			t.unpark(false)
			return nil, 0, ctx.Err()
		}
	}
}

// unpark notes that Next stopped waiting, for the alarm when fired.
func (t *Tap) unpark(fired bool) {
	t.mu.Lock()
	t.parked = false
	if fired {
		t.hold.fired()
	}
	t.mu.Unlock()
}

// Note has the reader call fn after it has taken every byte written so
// far and before any byte written later: an event put in the order of the
// output (the human pressed Enter, so what the child prints next is its
// own). fn runs on the reader's goroutine, between two calls of Next.
func (t *Tap) Note(fn func()) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.notes = append(t.notes, tapNote{at: len(t.pending), fn: fn})
	t.mu.Unlock()
	t.ready.Notify()
}

// NoteAfterLines has the reader call fn after it has taken lines line
// feeds written after this call (the echo of that many Enters), or
// maxBytes bytes when fewer line feeds come first, and before any byte
// written later: the end of an echo the child has not written yet. A tap
// closed before that never calls fn.
func (t *Tap) NoteAfterLines(lines, maxBytes int, fn func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.waits = append(t.waits, tapWait{lines: max(lines, 1), bytes: max(maxBytes, 1), fn: fn})
}

// Skipped returns how many bytes the tap has dropped since it was made.
func (t *Tap) Skipped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Close ends the tap: Next returns what is pending, then io.EOF.
func (t *Tap) Close() error {
	t.mu.Lock()
	t.closed = true
	t.hold.close()
	t.mu.Unlock()
	t.ready.Notify()
	return nil
}

package scanner

import (
	"context"
	"errors"
	"time"
)

// Flood control: no agent CLI writes faster than floodRate for long; a
// `cat` of a huge file in a wrapped shell does. While the output comes
// faster, the scanner reads none of it but keeps the newest floodTail bytes
// (a few screens), and counts the rest as skipped, so that a flood costs
// little CPU and the human's pass-through keeps its speed.
//
// A flood is told by what piles up in the source, not by reading it:
// once a window has brought 1/floodProbe of the bytes a flood brings in
// one (50 KB at 8 MB/s: the start of a cat, a big redraw), the scanner
// takes nothing more from the source until the window ends, and what
// piled up there meanwhile gives the window's rate. A flood keeps the
// newest bytes of it; slower output is read in full, late by the rest of
// the window at most, and in order with the source's notes (a Tap's,
// which run as Next reaches them). Issue 34: measuring the rate by
// reading each flood's first window in full was most of the wrapper's
// CPU in a cat after the pump's system calls, and held up the pump on the
// wrapper's one processor. The wrapper's Tap holds a megabyte: it drops
// bytes of a window left to pile up only when they came at 20 MB/s or
// more, a flood (or when the scanner is kept off the processor longer
// than a window, as it would drop them without the wait).
//
// A flood ends only when the rate falls below floodEnd: a `cat` slowed for
// a moment (the reader of the terminal, a loaded machine) stays skipped
// rather than read in full windows of 50 ms each time it dips.
const (
	floodRate   = 8 << 20 // bytes per second
	floodEnd    = floodRate / 4
	floodWindow = 50 * time.Millisecond
	floodProbe  = 8 // a window that brought a floodProbe-th of a flood's bytes is left to pile up
	floodTail   = 64 << 10
	floodNap    = 20 * time.Millisecond
)

// floodClock is the clock of flood control: now and sleep, the real ones
// when nil.
type floodClock struct {
	Now   func() time.Time
	Sleep func(time.Duration)
}

func (c floodClock) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}

func (c floodClock) sleep(d time.Duration) {
	if c.Sleep == nil {
		time.Sleep(d)
		return
	}
	c.Sleep(d)
}

// flood measures the output rate and holds what a flood leaves to read.
type flood struct {
	clock    floodClock
	rate     float64 // floodRate (zero), or what the scanner was given
	start    time.Time
	bytes    int64
	flooding bool
	tail     []byte // the newest bytes of the flood
	dropped  int64  // bytes of the flood not kept, and skipped by the source
}

// errFloodOver is flood.next's word that no output came for a window
// while a flood held bytes back.
var errFloodOver = errors.New("flood over")

// next is src.Next, except that while a flood holds bytes back it waits
// for output at most floodWindow and then returns errFloodOver.
func (f *flood) next(ctx context.Context, src Source) ([]byte, int64, error) {
	if !f.flooding {
		return src.Next(ctx)
	}
	wait, cancel := context.WithTimeout(ctx, floodWindow)
	defer cancel()
	chunk, skipped, err := src.Next(wait)
	if err != nil && ctx.Err() == nil && wait.Err() != nil && len(chunk) == 0 && skipped == 0 {
		return nil, 0, errFloodOver
	}
	return chunk, skipped, err
}

// end ends a flood: what follows is read as it comes.
func (f *flood) end() {
	f.flooding = false
	f.start, f.bytes = time.Time{}, 0
}

// limit is the rate above which output is a flood.
func (f *flood) limit() float64 {
	if f.rate == 0 {
		return floodRate
	}
	return f.rate
}

// take accounts for one chunk and reports whether it belongs to a flood
// (and was kept in the tail rather than to be read now).
func (f *flood) take(now time.Time, chunk []byte, skipped int64) bool {
	if f.start.IsZero() {
		f.start = now
	}
	f.bytes += int64(len(chunk)) + skipped
	if el := now.Sub(f.start); el >= floodWindow {
		limit := f.limit()
		if f.flooding {
			limit = limit * floodEnd / floodRate
		}
		f.flooding = float64(f.bytes)/el.Seconds() > limit
		f.start, f.bytes = now, 0
	}
	if !f.flooding {
		if f.dropped > 0 || len(f.tail) > 0 {
			// Ending a flood: this chunk joins its tail, read next.
			f.keep(chunk, skipped)
		}
		return false
	}
	f.keep(chunk, skipped)
	return true
}

// probe says how long to take nothing from the source after a chunk was
// read in full: the rest of the window once it has brought 1/floodProbe
// of a flood's bytes (take then judges it with what piled up), else zero.
func (f *flood) probe(now time.Time) time.Duration {
	if f.flooding || f.start.IsZero() || float64(f.bytes) < f.limit()*floodWindow.Seconds()/floodProbe {
		return 0
	}
	return max(f.start.Add(floodWindow).Sub(now), 0)
}

func (f *flood) keep(chunk []byte, skipped int64) {
	if skipped > 0 {
		// Bytes lost before chunk: what the tail held is no longer next to
		// what follows.
		f.dropped += skipped + int64(len(f.tail))
		f.tail = f.tail[:0]
	}
	if over := len(chunk) - floodTail; over > 0 {
		// What a nap piled up (up to the source's megabyte): only its
		// newest bytes are copied.
		f.dropped += int64(len(f.tail) + over)
		f.tail = append(f.tail[:0], chunk[over:]...)
		return
	}
	f.tail = append(f.tail, chunk...)
	if len(f.tail) > 2*floodTail {
		// Cut back now and then, not at every chunk: moving floodTail
		// bytes for each 4 KB read cost more than the reads.
		f.trim()
	}
}

// trim keeps the newest floodTail bytes of the tail, the rest dropped.
func (f *flood) trim() {
	if over := len(f.tail) - floodTail; over > 0 {
		f.dropped += int64(over)
		f.tail = append(f.tail[:0], f.tail[over:]...)
	}
}

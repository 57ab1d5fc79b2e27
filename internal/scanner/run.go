package scanner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Run feeds the scanner from src until src ends (io.EOF: everything left
// becomes final, and Run returns nil), src fails, or ctx ends. Between
// chunks it re-reads the screen every Tick so that quiet rows fire.
func (s *Scanner) Run(ctx context.Context, src Source) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The clock (clock.go): t re-reads the screen while a pass can
		// change its answer, quiet wakes it once the screen has been
		// quiet long enough (alarm.go), and both are stopped while no
		// pass can (dormant). At most one of them is set.
		t := time.NewTimer(s.tick)
		defer t.Stop()
		quiet := newAlarm()
		defer quiet.close()
		s.mu.Lock()
		s.alarm = quiet
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.alarm, s.quietWait = nil, false
			s.mu.Unlock()
		}()
		ticking := true
		soon := time.NewTimer(settleTime)
		soon.Stop()
		armed := false
		next := func() {
			s.Tick()
			d, due, onQuiet := s.nextTick()
			ticking = due
			switch {
			case due && onQuiet:
				quiet.set(d)
			case due:
				quiet.stop()
				t.Reset(d)
			default:
				quiet.stop()
			}
		}
		for {
			select {
			case <-ctx.Done():
				soon.Stop()
				return
			case <-t.C:
				next()
			case <-quiet.C:
				quiet.fired()
				next()
			case <-s.kick:
				if !ticking {
					t.Reset(s.tick)
					ticking = true
				}
				if !armed {
					soon.Reset(min(settleTime, s.tick))
					armed = true
				}
			case <-soon.C:
				armed = false
				s.settle()
			}
		}
	}()
	defer wg.Wait()
	defer cancel()
	fl := flood{rate: s.floodAt}
	readTail := func() {
		fl.trim()
		s.Skip(fl.dropped)
		s.Write(fl.tail)
		fl.dropped, fl.tail = 0, fl.tail[:0]
	}
	for {
		chunk, skipped, err := fl.next(ctx, src)
		if errors.Is(err, errFloodOver) {
			// The output stopped in a flood (the cat ended): read its
			// newest bytes now, not when the program next writes.
			fl.end()
			readTail()
			continue
		}
		if fl.take(time.Now(), chunk, skipped) {
			// A flood: only the newest bytes are kept. Let the output pile
			// up a little, so that skipping it costs few wake-ups.
			if err == nil {
				time.Sleep(floodNap)
				continue
			}
		} else if fl.dropped > 0 || len(fl.tail) > 0 {
			// The flood is over: start again from its newest bytes.
			readTail()
		} else {
			if skipped > 0 {
				s.Skip(skipped)
			}
			if len(chunk) > 0 {
				s.Write(chunk)
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if fl.dropped > 0 || len(fl.tail) > 0 {
				readTail()
			}
			s.Flush()
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			return fmt.Errorf("scan terminal output: %w", err)
		}
	}
}

// Flood control: no agent CLI writes faster than floodRate for long; a
// `cat` of a huge file in a wrapped shell does. While the output comes
// faster, the scanner reads none of it but keeps the newest floodTail bytes
// (a few screens), and counts the rest as skipped, so that a flood costs
// little CPU and the human's pass-through keeps its speed.
//
// A flood ends only when the rate falls below floodEnd: a `cat` slowed for
// a moment (the reader of the terminal, a loaded machine) stays skipped
// rather than read in full windows of 50 ms each time it dips.
const (
	floodRate   = 8 << 20 // bytes per second
	floodEnd    = floodRate / 4
	floodWindow = 50 * time.Millisecond
	floodTail   = 64 << 10
	floodNap    = 20 * time.Millisecond
)

// flood measures the output rate and holds what a flood leaves to read.
type flood struct {
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

// take accounts for one chunk and reports whether it belongs to a flood
// (and was kept in the tail rather than to be read now).
func (f *flood) take(now time.Time, chunk []byte, skipped int64) bool {
	if f.start.IsZero() {
		f.start = now
	}
	f.bytes += int64(len(chunk)) + skipped
	if el := now.Sub(f.start); el >= floodWindow {
		limit := f.rate
		if limit == 0 {
			limit = floodRate
		}
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

func (f *flood) keep(chunk []byte, skipped int64) {
	if skipped > 0 {
		// Bytes lost before chunk: what the tail held is no longer next to
		// what follows.
		f.dropped += skipped + int64(len(f.tail))
		f.tail = f.tail[:0]
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

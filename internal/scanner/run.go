package scanner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/relayhq/relay/internal/alarm"
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
		// quiet long enough (internal/alarm), and both are stopped while no
		// pass can (dormant). At most one of them is set.
		t := time.NewTimer(s.tick)
		defer t.Stop()
		quiet := alarm.New()
		defer quiet.Close()
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
				quiet.Set(d)
			case due:
				quiet.Stop()
				t.Reset(d)
			default:
				quiet.Stop()
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
				quiet.Fired()
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
	fl := flood{rate: s.floodAt, clock: s.floodClock}
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
		now := fl.clock.now()
		if fl.take(now, chunk, skipped) {
			// A flood: only the newest bytes are kept. Let the output pile
			// up a little, so that skipping it costs few wake-ups.
			if err == nil {
				fl.clock.sleep(floodNap)
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
			if d := fl.probe(now); d > 0 && err == nil {
				// Much output in little time: let the rest of the window
				// pile up in the source, unread; its rate is known then.
				// What the chunk shows is told first: the echo of what
				// relay typed never waits for the window.
				if t, ok := src.(Taker); ok {
					t.Taken()
				}
				fl.clock.sleep(d)
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

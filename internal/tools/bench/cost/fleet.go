package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/relayhq/relay/bus"
)

// fleetPhase starts o.shells wrapped shells at once, times how long after
// the last start they are all online, then sends one message to each, one
// at a time, timed from the send until its text is on the shell's screen.
func fleetPhase(ctx context.Context, h *harness, o options) ([]row, error) {
	names := make([]string, o.shells)
	terms := make([]*term, 0, o.shells)
	defer func() {
		var wg sync.WaitGroup
		for _, t := range terms {
			wg.Add(1)
			go func() { defer wg.Done(); t.stop() }()
		}
		wg.Wait()
	}()
	for i := range names {
		names[i] = fmt.Sprintf("Sh%03d", i)
		t, err := h.wrap(names[i], true, "bash", "--norc", "--noprofile")
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
	last := time.Now()
	if err := h.waitOnline(ctx, 60*time.Second, names...); err != nil {
		return nil, err
	}
	online := time.Since(last)
	rows := []row{{what: fmt.Sprintf("%d wrapped shells online after the last start", o.shells),
		figure: online.Round(time.Millisecond).String(), bar: "<= 10s"}}
	time.Sleep(settle)
	ds := make([]time.Duration, 0, len(names))
	for i, n := range names {
		tok := fmt.Sprintf("f%dq", i)
		t0 := time.Now()
		env, err := h.bc.Send(ctx, n, tok+" one message")
		if err != nil {
			return rows, err
		}
		if err := terms[i].waitFor(tok, 20*time.Second); err != nil {
			return rows, fmt.Errorf("%s: %w (its log: %s)", n, err, h.logTail(n))
		}
		d := time.Since(t0)
		ds = append(ds, d)
		if d > slowMessage {
			fmt.Fprintf(os.Stderr, "cost: %s took %v: %s\n", n, d.Round(time.Millisecond), h.stages(ctx, env, t0))
		}
	}
	slices.Sort(ds)
	p := func(q float64) time.Duration {
		return ds[min(len(ds)-1, int(q*float64(len(ds))))].Round(10 * time.Microsecond)
	}
	rows = append(rows, row{what: "one message to each, send → on its screen",
		figure: fmt.Sprintf("p50 %v p99 %v max %v", p(0.5), p(0.99), ds[len(ds)-1].Round(10*time.Microsecond)),
		bar:    "p99 < 20ms"})
	return rows, nil
}

// slowMessage is how long a fleet message may take before the phase says
// where its time went.
const slowMessage = 100 * time.Millisecond

// stages says when each receipt of env came, from t0, so that a slow
// message shows whether the hub, the wrapper's inbox or its typing took
// the time.
func (h *harness) stages(ctx context.Context, env bus.Envelope, t0 time.Time) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Its text is on the screen: the delivered receipt is on its way.
	_, _ = h.bc.Await(ctx, env, bus.StatusDelivered)
	var parts []string
	err := h.bc.Log(ctx, bus.LogOptions{ID: env.ID, From: env.From, Since: env.Created}, func(e bus.Entry) error {
		for _, s := range e.Stages {
			parts = append(parts, fmt.Sprintf("%s +%v", s.Stage, s.At.Sub(t0).Round(time.Millisecond)))
		}
		return nil
	})
	if err != nil {
		return err.Error()
	}
	return strings.Join(parts, ", ")
}

// logTail returns the last lines of the wrapper log of the agent name, to
// say why a message did not show.
func (h *harness) logTail(name string) string {
	b, err := os.ReadFile(filepath.Join(h.dir, "home", "logs", "wrap-"+name+".log"))
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "\n" + strings.Join(lines[max(0, len(lines)-15):], "\n")
}

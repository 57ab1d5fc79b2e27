package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// senderRounds is how many times the ten senders write at once: one round
// of 100 messages lasts about 20 ms, so that a single round's figure is
// mostly the scheduling luck of twenty processes on two cores.
const senderRounds = 5

// manySenders measures the whole path with ten wrapped senders, each
// writing o.per messages at once into rc, senderRounds times, and reports
// the median round beside the slowest and the fastest. Damping is lifted
// for the senders so that the same ten can go again (its check still runs
// for every message).
func manySenders(ctx context.Context, h *harness, rc *receiver, o options, cmd string) ([]row, error) {
	const k = 10
	var ss []*sender
	defer func() {
		for _, s := range ss {
			s.finish()
		}
	}()
	for i := 0; i < k; i++ {
		s, err := h.startSender(ctx, fmt.Sprintf("Carol%03d", i), rc.name, liftDamping)
		if err != nil {
			return nil, err
		}
		ss = append(ss, s)
	}
	total := k * o.per
	type round struct {
		rate          float64
		n, dups       int
		ok            bool
		took, lastHub string
	}
	var rounds []round
	var all int
	cpu0, scpu0 := cpuOf(rc.wrapped), cpuOf(wrappers(ss)...)
	for range senderRounds {
		first := h.seq.take(total)
		t0 := time.Now()
		for i, s := range ss {
			if err := s.cue(o.per, first+int64(i*o.per)); err != nil {
				return nil, err
			}
		}
		n, dups, last, ok := waitCount(rc, 2*time.Minute, first, total)
		all += n
		d := last.Sub(t0)
		r := round{n: n, dups: dups, ok: ok, took: ms(d), lastHub: h.lastAtHub(first, total, t0)}
		if d > 0 {
			r.rate = float64(n) / d.Seconds()
		}
		rounds = append(rounds, r)
		if !ok {
			break
		}
	}
	rcpu, scpu := cpuOf(rc.wrapped)-cpu0, cpuOf(wrappers(ss)...)-scpu0
	slices.SortFunc(rounds, func(a, b round) int {
		switch {
		case a.rate < b.rate:
			return -1
		case a.rate > b.rate:
			return 1
		}
		return 0
	})
	med := rounds[len(rounds)/2]
	fig := fmt.Sprintf("%.0f msg/s (median of %d rounds of %d; %.0f–%.0f)", med.rate, len(rounds), total, rounds[0].rate, rounds[len(rounds)-1].rate)
	for _, r := range rounds {
		fig += missing(r.n, r.dups, total, r.ok)
	}
	return []row{
		{fmt.Sprintf("throughput: %d wrapped senders × %d → agent, queue mode", k, o.per), fig, "≥ 5,000 msg/s", cmd},
		{"  CPU of the receiving wrapper, of the sending ones", perMessage(rcpu, all) + ", " + perMessage(scpu, all), "", cmd},
		{"  median round: last one in after, at the hub after (the rest is hub → stdin)", med.took + ", " + med.lastHub, "", cmd},
	}, nil
}

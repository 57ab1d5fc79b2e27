package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// arrivalTimeout bounds the wait for one message; past it, it counts as lost.
const arrivalTimeout = 15 * time.Second

// latency sends o.n messages one at a time from wrapped senders to Bob and
// measures each from the sender's write to Bob's read, split at the hub.
func latency(ctx context.Context, h *harness, o options, cmd string) ([]row, error) {
	fl, err := floorRTT(h, o.floor)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	bob, err := h.startReceiver(ctx, "Bob", "wait", false)
	if err != nil {
		return nil, err
	}
	defer bob.stop()
	if err := warmUp(ctx, h, bob); err != nil {
		return nil, err
	}
	var total, toHub, fromHub []time.Duration
	lost := 0
	for i, k := 0, 0; i < o.n; k++ {
		s, err := h.startSender(ctx, fmt.Sprintf("Alice%03d", k), "Bob")
		if err != nil {
			return nil, err
		}
		for j := 0; j < o.per && i < o.n; j, i = j+1, i+1 {
			seq := h.seq.take(1)
			if err := s.cue(1, seq); err != nil {
				return nil, err
			}
			got, ok := bob.waitFor(arrivalTimeout, func(g []arrival) bool { return has(g, seq) })
			if !ok {
				lost++
				continue
			}
			a := find(got, seq)
			total = append(total, a.read.Sub(a.sent))
			if bt, ok := h.busTime(seq); ok {
				toHub = append(toHub, bt.Sub(a.sent))
				fromHub = append(fromHub, a.read.Sub(bt))
			}
		}
		s.finish()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	d := summarise(total)
	rows := []row{
		{"latency: write → Bob's stdin", d.String(), "p99 < 5 ms", cmd},
		{"  split: write → hub (screen read, scanner, publish)", summarise(toHub).String(), "", cmd},
		{"  split: hub → Bob's stdin (inbox, idle wait, typing)", summarise(fromHub).String(), "", cmd},
		{"floor: raw NATS request/reply, same hub", fl.String(), "", cmd},
	}
	if lost > 0 {
		rows = append(rows, row{"latency: lost", fmt.Sprintf("%d of %d", lost, o.n), "0", cmd})
	}
	return rows, nil
}

// warmUp sends one message over the bus and waits until the receiver has
// read it: its wrapper is up, registered and has seen the agent idle.
func warmUp(ctx context.Context, h *harness, rc *receiver) error {
	seq := h.seq.take(1)
	if _, err := h.bc.Send(ctx, rc.name, body(seq)); err != nil {
		return fmt.Errorf("warm-up send to %s: %w", rc.name, err)
	}
	if _, ok := rc.waitFor(arrivalTimeout, func(g []arrival) bool { return has(g, seq) }); !ok {
		return fmt.Errorf("warm-up message to %s did not arrive in %v", rc.name, arrivalTimeout)
	}
	return nil
}

func find(got []arrival, seq int64) arrival {
	for _, a := range got {
		if a.seq == seq {
			return a
		}
	}
	return arrival{}
}

// countSince counts the distinct sequence numbers from first on in got.
func countSince(got []arrival, first int64) (distinct, dups int, last time.Time) {
	seen := map[int64]bool{}
	for _, a := range got {
		if a.seq < first {
			continue
		}
		if seen[a.seq] {
			dups++
			continue
		}
		seen[a.seq] = true
		if a.read.After(last) {
			last = a.read
		}
	}
	return len(seen), dups, last
}

// throughput pushes many messages at once and counts arrivals per second:
// from the bench's bus client (hub → agent) and from ten wrapped senders
// at once (the whole path), into an agent in queue mode.
func throughput(ctx context.Context, h *harness, o options, cmd string) ([]row, error) {
	rc, err := h.startReceiver(ctx, "Tess", "queue", true)
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	if err := warmUp(ctx, h, rc); err != nil {
		return nil, err
	}
	var rows []row
	// Hub → agent: the bench sends as fast as the hub acknowledges.
	first := h.seq.take(o.throughput)
	t0 := time.Now()
	for i := 0; i < o.throughput; i++ {
		if _, err := h.bc.Send(ctx, rc.name, body(first+int64(i))); err != nil {
			return nil, fmt.Errorf("send %d: %w", i, err)
		}
	}
	sent := time.Since(t0)
	got, ok := rc.waitFor(2*time.Minute, func(g []arrival) bool { n, _, _ := countSince(g, first); return n >= o.throughput })
	n, dups, last := countSince(got, first)
	rows = append(rows,
		row{"throughput: bus send (JetStream publish, acked)", rate(o.throughput, sent), "", cmd},
		row{"throughput: hub → agent stdin, queue mode", rate(n, last.Sub(t0)) + missing(n, dups, o.throughput, ok), "≥ 10,000 msg/s", cmd})

	// The whole path: ten wrapped senders write their allowance at once.
	const k = 10
	var ss []*sender
	for i := 0; i < k; i++ {
		s, err := h.startSender(ctx, fmt.Sprintf("Carol%03d", i), rc.name)
		if err != nil {
			return rows, err
		}
		ss = append(ss, s)
	}
	first = h.seq.take(k * o.per)
	t0 = time.Now()
	for i, s := range ss {
		if err := s.cue(o.per, first+int64(i*o.per)); err != nil {
			return rows, err
		}
	}
	total := k * o.per
	got, ok = rc.waitFor(2*time.Minute, func(g []arrival) bool { n, _, _ := countSince(g, first); return n >= total })
	n, dups, last = countSince(got, first)
	for _, s := range ss {
		s.finish()
	}
	rows = append(rows, row{fmt.Sprintf("throughput: %d wrapped senders × %d → agent, queue mode", k, o.per),
		rate(n, last.Sub(t0)) + missing(n, dups, total, ok), "≥ 10,000 msg/s", cmd})
	return rows, nil
}

func rate(n int, d time.Duration) string {
	if d <= 0 || n == 0 {
		return "none arrived"
	}
	return fmt.Sprintf("%.0f msg/s (%d in %s)", float64(n)/d.Seconds(), n, ms(d))
}

func missing(n, dups, want int, ok bool) string {
	s := ""
	if n < want || !ok {
		s += fmt.Sprintf(", %d missing", want-n)
	}
	if dups > 0 {
		s += fmt.Sprintf(", %d twice", dups)
	}
	return s
}

// burst sends o.burst messages back-to-back to an idle shell-like agent
// (canonical terminal, echo on) and times the last arrival, in wait and
// queue mode, from the bus client and from `relay send` processes.
func burst(ctx context.Context, h *harness, o options, cmd string) ([]row, error) {
	var rows []row
	for _, mode := range []string{"wait", "queue"} {
		for _, via := range []string{"bus client", "relay send"} {
			name := "Dave" + mode[:1] + map[string]string{"bus client": "b", "relay send": "s"}[via]
			rc, err := h.startReceiver(ctx, name, mode, false)
			if err != nil {
				return rows, err
			}
			if err := warmUp(ctx, h, rc); err != nil {
				return rows, err
			}
			// Let the warm-up's echo settle: the agent is idle when it starts.
			time.Sleep(time.Second)
			first := h.seq.take(o.burst)
			t0 := time.Now()
			for i := 0; i < o.burst; i++ {
				b := body(first + int64(i))
				if via == "bus client" {
					_, err = h.bc.Send(ctx, rc.name, b)
				} else {
					err = h.relaySend(ctx, rc.name, b)
				}
				if err != nil {
					return rows, fmt.Errorf("burst send %d: %w", i, err)
				}
			}
			sent := time.Since(t0)
			got, ok := rc.waitFor(time.Minute, func(g []arrival) bool { n, _, _ := countSince(g, first); return n >= o.burst })
			n, dups, last := countSince(got, first)
			fig := "none arrived"
			if n > 0 {
				fig = fmt.Sprintf("last in after %s (sending took %s)", ms(last.Sub(t0)), ms(sent)) + missing(n, dups, o.burst, ok)
			}
			rows = append(rows, row{fmt.Sprintf("burst: %d via %s, %s mode", o.burst, via, mode), fig, "< 1 s", cmd})
			rc.stop()
		}
	}
	return rows, nil
}

// relaySend runs `relay send --from Bench TO BODY` against the hub.
func (h *harness) relaySend(ctx context.Context, to, body string) error {
	c := exec.CommandContext(ctx, h.relay, "send", "--hub", h.hub.URL(), "--from", "Bench", to, body)
	c.Env = append(os.Environ(), "RELAY_HOME="+filepath.Join(h.dir, "home"), "RELAY_TOKEN="+h.hub.Token())
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("relay send: %v: %s", err, out)
	}
	return nil
}

// success has five wrapped senders each write ten messages at once to an
// agent in wait mode, and counts what arrives, and what arrives twice.
func success(ctx context.Context, h *harness, o options, cmd string) ([]row, error) {
	rc, err := h.startReceiver(ctx, "Erin", "wait", false)
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	if err := warmUp(ctx, h, rc); err != nil {
		return nil, err
	}
	k := (o.success + o.per - 1) / o.per
	first := h.seq.take(o.success)
	var ss []*sender
	for i := 0; i < k; i++ {
		s, err := h.startSender(ctx, fmt.Sprintf("Frank%03d", i), rc.name)
		if err != nil {
			return nil, err
		}
		ss = append(ss, s)
	}
	t0 := time.Now()
	left := o.success
	for i, s := range ss {
		n := min(o.per, left)
		left -= n
		if err := s.cue(n, first+int64(i*o.per)); err != nil {
			return nil, err
		}
	}
	got, ok := rc.waitFor(3*time.Minute, func(g []arrival) bool { n, _, _ := countSince(g, first); return n >= o.success })
	// A duplicate would come soon after: watch a little longer.
	if ok {
		rc.waitFor(3*time.Second, func([]arrival) bool { return false })
		got = rc.arrivals()
	}
	n, dups, last := countSince(got, first)
	for _, s := range ss {
		s.finish()
	}
	return []row{{fmt.Sprintf("success: %d messages from %d wrapped senders, wait mode", o.success, k),
		fmt.Sprintf("%d of %d arrived, %d twice, last after %s", n, o.success, dups, ms(last.Sub(t0))), "50 of 50, none twice", cmd}}, nil
}

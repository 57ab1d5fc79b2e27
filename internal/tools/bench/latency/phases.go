package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/relayhq/relay/bus"
)

// defaultMode is the delivery mode relay uses when none is configured,
// spelt out so that every binary measured gets the same flag.
const defaultMode = "batch"

// arrivalTimeout bounds the wait for one message; past it, it counts as lost.
const arrivalTimeout = 15 * time.Second

// liftDamping is configuration that lets one wrapped agent send as fast as
// it likes (loop damping allows 10 messages a minute to one peer).
const liftDamping = "[damping]\npair_max = 1000000\nagent_max = 1000000\n"

// latency sends o.n messages one at a time from wrapped senders to Bob and
// measures each from the sender's write to Bob's read, split at the hub:
// first with the defaults, then with the screen's idle quiet time lowered
// (the knob that dominates), damping lifted.
func latency(ctx context.Context, h *harness, o options, cmd string) ([]row, error) {
	fl, err := floorRTT(h, o.floor)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	r, err := oneByOne(ctx, h, "Bob", "", o.n, o.per, true)
	if err != nil {
		return nil, err
	}
	rows := r.rows("defaults, target idle", "p99 < 5 ms", cmd)
	rows = append(rows, row{"floor: raw NATS request/reply, same hub", fl.String(), "", cmd})
	if d := summarise(r.total); d.n > 0 && fl.p50 > 0 {
		rows = append(rows, row{"ratio: latency ÷ floor", fmt.Sprintf("p50 ×%.0f  p99 ×%.0f", float64(d.p50)/float64(fl.p50), float64(d.p99)/float64(fl.p99)), "", cmd})
	}
	r, err = oneByOne(ctx, h, "Bob-b2b", "", o.knobN, o.per, false)
	if err != nil {
		return rows, err
	}
	rows = append(rows, r.rows("defaults, each sent as the one before arrives", "p50 < 20 ms", cmd)...)
	for _, q := range o.quiet {
		cfg := liftDamping + fmt.Sprintf("[delivery]\nidle_quiet_ms = %d\n", q)
		r, err := oneByOne(ctx, h, fmt.Sprintf("Bob-q%d", q), cfg, o.knobN, o.knobN, true)
		if err != nil {
			return rows, err
		}
		rows = append(rows, r.rows(fmt.Sprintf("delivery.idle_quiet_ms = %d, target idle", q), "", cmd)...)
	}
	return rows, nil
}

// split is what oneByOne measured.
type split struct {
	total, toHub, fromHub []time.Duration
	lost, n               int
}

func (r split) rows(label, bar, cmd string) []row {
	rows := []row{
		{"latency, " + label + ": write → stdin", summarise(r.total).String(), bar, cmd},
		{"  write → hub (screen, scanner, publish)", summarise(r.toHub).String(), "", cmd},
		{"  hub → stdin (inbox, idle wait, settle, typing)", summarise(r.fromHub).String(), "", cmd},
	}
	if r.lost > 0 {
		rows = append(rows, row{"  lost", fmt.Sprintf("%d of %d", r.lost, r.n), "0", cmd})
	}
	return rows
}

// oneByOne wraps a receiver named to and sends it n messages, one at a
// time, each once the one before has arrived (and, with idle, once the
// receiver's wrapper says it is idle again), from wrapped senders that take
// turns every per messages; every wrapper gets the configuration cfg.
func oneByOne(ctx context.Context, h *harness, to, cfg string, n, per int, idle bool) (split, error) {
	r := split{n: n}
	rc, err := h.startReceiver(ctx, to, defaultMode, cfg, false)
	if err != nil {
		return r, err
	}
	defer rc.stop()
	if err := warmUp(ctx, h, rc); err != nil {
		return r, err
	}
	for i, k := 0, 0; i < n; k++ {
		s, err := h.startSender(ctx, fmt.Sprintf("%s-from%03d", to, k), to, cfg)
		if err != nil {
			return r, err
		}
		for j := 0; j < per && i < n; j, i = j+1, i+1 {
			if idle {
				if err := h.waitIdle(ctx, to, rc.lastRead()); err != nil {
					return r, err
				}
			}
			seq := h.seq.take(1)
			if err := s.cue(1, seq); err != nil {
				return r, err
			}
			got, ok := rc.waitFor(arrivalTimeout, func(g []arrival) bool { return has(g, seq) })
			if !ok {
				r.lost++
				continue
			}
			a := find(got, seq)
			r.total = append(r.total, a.read.Sub(a.sent))
			if bt, ok := h.busTime(seq); ok {
				r.toHub = append(r.toHub, bt.Sub(a.sent))
				r.fromHub = append(r.fromHub, a.read.Sub(bt))
			}
		}
		s.finish()
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
	}
	return r, nil
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
	t := tally{first: first}
	t.add(got)
	return t.n, t.dups, t.last
}

// tally counts the distinct sequence numbers from first on as arrivals
// come, each arrival once: waiting on a recount of all of them at every
// arrival cost the bench more CPU than the wrapper it measures.
type tally struct {
	first   int64
	seen    map[int64]bool
	next    int // arrivals counted so far
	n, dups int
	last    time.Time
}

// add counts the arrivals of got not counted yet (got grows by appending).
func (t *tally) add(got []arrival) {
	if t.seen == nil {
		t.seen = map[int64]bool{}
	}
	for _, a := range got[min(t.next, len(got)):] {
		if a.seq < t.first {
			continue
		}
		if t.seen[a.seq] {
			t.dups++
			continue
		}
		t.seen[a.seq] = true
		t.n++
		if a.read.After(t.last) {
			t.last = a.read
		}
	}
	t.next = max(t.next, len(got))
}

// waitCount waits until want distinct messages from first on arrived at rc,
// or the timeout passed.
func waitCount(rc *receiver, timeout time.Duration, first int64, want int) (n, dups int, last time.Time, ok bool) {
	t := tally{first: first}
	_, ok = rc.waitFor(timeout, func(g []arrival) bool { t.add(g); return t.n >= want })
	t.add(rc.arrivals())
	return t.n, t.dups, t.last, ok
}

// throughput pushes many messages at once and counts arrivals per second:
// from the bench's bus client (hub → agent) and from ten wrapped senders
// at once (the whole path), into an agent in queue mode.
func throughput(ctx context.Context, h *harness, o options, cmd string) ([]row, error) {
	// A line reader with the terminal's echo on, as a plain shell reads:
	// relay types each message as a line of its own, every injection within
	// the terminal's line limit, so raw mode is not needed to take them
	// all, and the echo is the shell's sign that it took them.
	rc, err := h.startReceiver(ctx, "Tess", "queue", liftDamping, false)
	if err != nil {
		return nil, err
	}
	defer rc.stop()
	if err := warmUp(ctx, h, rc); err != nil {
		return nil, err
	}
	var rows []row
	fr, err := floorRate(h, 20*o.throughput)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	rows = append(rows, row{"floor: raw NATS publish → subscriber, same hub", fr, "", cmd})
	// Hub → agent: the bench sends as a fast sender would, every message
	// in flight at once (bus.SendAll: asynchronous publishes, the hub's
	// acknowledgements collected afterwards). The clock starts before the
	// first publish and stops at the last read: the figure includes the
	// sending, and so can only understate hub → stdin.
	first := h.seq.take(o.throughput)
	ms := make([]bus.Message, o.throughput)
	for i := range ms {
		ms[i] = bus.Message{To: rc.name, Body: body(first + int64(i))}
	}
	cpu0 := cpuOf(rc.wrapped)
	t0 := time.Now()
	for i, r := range h.bc.SendAll(ctx, ms) {
		if r.Err != nil {
			return nil, fmt.Errorf("send %d: %w", i, r.Err)
		}
	}
	sent := time.Since(t0)
	n, dups, last, ok := waitCount(rc, 2*time.Minute, first, o.throughput)
	rows = append(rows,
		row{"throughput: bus send, all in flight (SendAll, every ack collected)", rate(o.throughput, sent), "", cmd},
		row{"throughput: hub → agent stdin, queue mode (clock from the first publish)", rate(n, last.Sub(t0)) + missing(n, dups, o.throughput, ok), "≥ 10,000 msg/s", cmd},
		row{"  CPU of the receiving wrapper", perMessage(cpuOf(rc.wrapped)-cpu0, n), "", cmd})

	// The whole path: ten wrapped senders write ten each at once.
	r, err := manySenders(ctx, h, rc, o, cmd)
	rows = append(rows, r...)
	if err != nil {
		return rows, err
	}

	// One wrapped sender, damping lifted, writes a long burst at once.
	s, err := h.startSender(ctx, "Gina", rc.name, liftDamping)
	if err != nil {
		return rows, err
	}
	defer s.finish()
	first = h.seq.take(o.wburst)
	cpu0, scpu0 := cpuOf(rc.wrapped), cpuOf(s.wrapped)
	t0 = time.Now()
	if err := s.cue(o.wburst, first); err != nil {
		return rows, err
	}
	n, dups, last, ok = waitCount(rc, time.Minute, first, o.wburst)
	rows = append(rows, row{fmt.Sprintf("throughput: 1 wrapped sender writes %d at once (damping lifted) → agent, queue mode", o.wburst),
		rate(n, last.Sub(t0)) + missing(n, dups, o.wburst, ok), "≥ 10,000 msg/s", cmd},
		row{"  CPU of the receiving wrapper, of the sending one", perMessage(cpuOf(rc.wrapped)-cpu0, n) + ", " + perMessage(cpuOf(s.wrapped)-scpu0, n), "", cmd},
		row{"  last one at the hub after (the rest is hub → stdin)", h.lastAtHub(first, o.wburst, t0), "", cmd})
	return rows, nil
}

// lastAtHub says when the last of n messages numbered from first crossed
// the hub, after t0.
func (h *harness) lastAtHub(first int64, n int, t0 time.Time) string {
	var last time.Time
	for i := int64(0); i < int64(n); i++ {
		if t, ok := h.busTime(first + i); ok && t.After(last) {
			last = t
		}
	}
	if last.IsZero() {
		return "n/a"
	}
	return ms(last.Sub(t0))
}

// wrappers returns the wrapper processes of senders.
func wrappers(ss []*sender) []*wrapped {
	ws := make([]*wrapped, len(ss))
	for i, s := range ss {
		ws[i] = s.wrapped
	}
	return ws
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
// queue mode and in the default (batch) mode, from the bus client and from
// `relay send` processes.
func burst(ctx context.Context, h *harness, o options, cmd string) ([]row, error) {
	var rows []row
	for _, mode := range []string{defaultMode, "wait", "queue"} {
		for _, via := range []string{"bus client", "relay send"} {
			name := "Dave" + mode[:1] + map[string]string{"bus client": "b", "relay send": "s"}[via]
			rc, err := h.startReceiver(ctx, name, mode, "", false)
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
			n, dups, last, ok := waitCount(rc, time.Minute, first, o.burst)
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
	rc, err := h.startReceiver(ctx, "Erin", "wait", "", false)
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
		s, err := h.startSender(ctx, fmt.Sprintf("Frank%03d", i), rc.name, "")
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

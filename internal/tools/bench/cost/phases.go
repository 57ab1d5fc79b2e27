package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/relayhq/relay/bus"
)

// settle is how long a wrapper is left after it is online before it is
// measured: its start-up work done.
const settle = 3 * time.Second

// rssPhase reads a wrapped shell's resident memory once idle, then sends
// it a stream of messages and reads its peak once the last is on screen.
func rssPhase(ctx context.Context, h *harness, o options) ([]row, error) {
	sh, err := h.wrap("Mem", true, "bash", "--norc", "--noprofile")
	if err != nil {
		return nil, err
	}
	defer sh.stop()
	if err := h.waitOnline(ctx, 20*time.Second, "Mem"); err != nil {
		return nil, err
	}
	time.Sleep(settle)
	// RSS counts the pages of the relay binary mapped in (RssFile, shared
	// by every wrapper); the wrapper's own memory is RssAnon. RssFile
	// depends on how the page cache holds the binary: a touched page of a
	// large folio maps the whole folio (up to 2 MB, PMD-mapped), so a
	// binary fresh from the linker reads about 5 MB more than the same
	// file copied in 4 KB writes (issue 34, measured on Linux 6.18, ext4).
	pid := sh.pid()
	rows := []row{{what: "wrapper RSS, idle wrapped bash", bar: "<= 20 MB",
		figure: fmt.Sprintf("%s (%s)", mb(status(pid, "VmRSS")), memSplit(pid))}}
	stop := make(chan struct{})
	peakAnon := make(chan int64)
	go func() {
		var peak int64
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, status(pid, "RssAnon"))
			select {
			case <-stop:
				peakAnon <- peak
				return
			case <-t.C:
			}
		}
	}()
	ms := make([]bus.Message, o.messages)
	for i := range ms {
		ms[i] = bus.Message{To: "Mem", Body: fmt.Sprintf("m%dz message of the stream", i)}
	}
	t0 := time.Now()
	for len(ms) > 0 {
		// In pieces: the client bounds the publishes in flight.
		n := min(len(ms), 1000)
		for _, r := range h.bc.SendAll(ctx, ms[:n]) {
			if r.Err != nil {
				return rows, fmt.Errorf("send: %w", r.Err)
			}
		}
		ms = ms[n:]
	}
	sent := time.Since(t0)
	last := fmt.Sprintf("m%dz", o.messages-1)
	err = sh.waitFor(last, 10*time.Minute)
	close(stop)
	anon := <-peakAnon
	if err != nil {
		return rows, err
	}
	took := time.Since(t0)
	rows = append(rows, row{what: fmt.Sprintf("wrapper RSS peak, %d-message stream", o.messages),
		figure: fmt.Sprintf("%s (own at its peak %s; sent in %v, all typed in %v)", mb(status(pid, "VmHWM")), mb(anon),
			sent.Round(time.Millisecond), took.Round(time.Millisecond)),
		bar: "<= 25 MB"})
	// A while after the burst: what the wrapper keeps (the runtime returns
	// freed memory to the system in the background).
	time.Sleep(settle)
	rows = append(rows, row{what: "wrapper RSS after the stream", figure: fmt.Sprintf("%s (%s)", mb(status(pid, "VmRSS")), memSplit(pid)),
		bar: "-"})
	return rows, nil
}

// timing is what timed measured of one run.
type timing struct {
	wall  time.Duration // from the start until it exited and its output ended
	flow  time.Duration // from the first byte shown to the last
	cpu   time.Duration // user and system, with the children it waited for
	shown int64         // bytes shown
}

// timed runs argv in a terminal of its own and returns its wall time,
// the time its output took from the first byte to the last, its CPU time
// (with the children it waited for: `cat` in both commands of the
// pass-through) and how many bytes it showed.
func timed(h *harness, argv []string) (timing, error) {
	t0 := time.Now()
	t, err := startTerm(argv, h.env(), h.dir, false)
	if err != nil {
		return timing{}, err
	}
	err = t.wait(2 * time.Minute)
	m := timing{wall: time.Since(t0), flow: t.flow(), shown: t.bytesShown()}
	if ps := t.cmd.ProcessState; ps != nil {
		m.cpu = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return m, fmt.Errorf("%v: %w", argv, err)
	}
	return m, nil
}

// paired is what pair measured: the medians of each command's wall,
// flow and CPU time, and the medians of the ratios a/b pair by pair.
type paired struct {
	wallA, wallB, flowA, flowB, cpuA, cpuB time.Duration
	wallRatio, flowRatio, cpuRatio         float64
}

// pair runs a and b in turn, runs times each after a warm-up, and returns
// the medians.
func pair(h *harness, runs int, a, b []string, check func(n int64) error) (paired, error) {
	var wa, wb, fa, fb, ca, cb []time.Duration
	var rw, rf, rc []float64
	for i := -1; i < runs; i++ {
		x, err := timed(h, a)
		if err == nil && check != nil {
			err = check(x.shown)
		}
		if err != nil {
			return paired{}, err
		}
		y, err := timed(h, b)
		if err == nil && check != nil {
			err = check(y.shown)
		}
		if err != nil {
			return paired{}, err
		}
		if i < 0 {
			continue // the warm-up
		}
		wa, wb, ca, cb = append(wa, x.wall), append(wb, y.wall), append(ca, x.cpu), append(cb, y.cpu)
		fa, fb = append(fa, x.flow), append(fb, y.flow)
		rw = append(rw, x.wall.Seconds()/y.wall.Seconds())
		rf = append(rf, x.flow.Seconds()/max(y.flow.Seconds(), 1e-3))
		rc = append(rc, x.cpu.Seconds()/max(y.cpu.Seconds(), 1e-3))
	}
	return paired{median(wa), median(wb), median(fa), median(fb), median(ca), median(cb),
		median(rw), median(rf), median(rc)}, nil
}

// median returns the middle of v (the mean of the two middles when v
// has an even length), leaving v as it was.
func median[T time.Duration | float64](v []T) T {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// startPhase times `relay wrap -- true` against `script -qc true`, and
// the same with --name, whose claim runs beside the child (the
// overlapped start; without --name relay may rename the agent, so it
// claims first); then `relay hook` against `true`, and the binaries'
// sizes.
func startPhase(_ context.Context, h *harness, o options) ([]row, error) {
	var rows []row
	for _, c := range []struct{ what, flags string }{
		{"relay wrap -- true vs script -qc true", ""},
		{"relay wrap --name N -- true (claim beside the child) vs script -qc true", "--name=start-bench"},
	} {
		argv := []string{h.relay, "wrap", "--hub", h.hub.URL()}
		if c.flags != "" {
			argv = append(argv, c.flags)
		}
		p, err := pair(h, o.runs, append(argv, "--", "true"),
			[]string{"script", "-qc", "true", "/dev/null"}, nil)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row{what: c.what,
			figure: fmt.Sprintf("%.2fx (%v vs %v; CPU %v vs %v)", p.wallRatio, p.wallA.Round(time.Millisecond), p.wallB.Round(time.Millisecond),
				p.cpuA.Round(time.Millisecond), p.cpuB.Round(time.Millisecond)),
			bar: "<= 1.5x"})
		if o.base == "" {
			continue
		}
		// This build against another, in turn: the machine's load, which
		// moves both alike, cancels out of the ratios pair by pair.
		base := slices.Clone(argv)
		base[0] = o.base
		p, err = pair(h, o.runs, append(argv, "--", "true"), append(base, "--", "true"), nil)
		if err != nil {
			return rows, err
		}
		rows = append(rows, row{what: "  the same, -relay vs -base",
			figure: fmt.Sprintf("CPU %.2fx (%v vs %v); wall %.2fx (%v vs %v)", p.cpuRatio, p.cpuA.Round(100*time.Microsecond), p.cpuB.Round(100*time.Microsecond),
				p.wallRatio, p.wallA.Round(100*time.Microsecond), p.wallB.Round(100*time.Microsecond)),
			bar: "-"})
	}
	// Agent CLIs run relay hook on every hook; without a wrapper to
	// answer it returns at once, so this is the binary's start and exit.
	p, err := pair(h, o.runs, []string{h.relay, "hook", "Stop"}, []string{"true"}, nil)
	if err != nil {
		return rows, err
	}
	rows = append(rows, row{what: "relay hook Stop (no wrapper) vs true",
		figure: fmt.Sprintf("%.2fx (%v vs %v; CPU %v vs %v)", p.wallRatio, p.wallA.Round(time.Millisecond), p.wallB.Round(time.Millisecond),
			p.cpuA.Round(time.Millisecond), p.cpuB.Round(time.Millisecond)),
		bar: "-"})
	return append(rows, row{what: "binaries on disk", figure: binarySizes(h.relay), bar: "-"}), nil
}

// binarySizes says the size of relay and of relay-hub beside it (make
// build makes both: the lean relay that wraps, the full one it runs for
// the hub's commands).
func binarySizes(relay string) string {
	var parts []string
	for _, p := range []string{relay, filepath.Join(filepath.Dir(relay), "relay-hub")} {
		fi, err := os.Stat(p)
		if err != nil {
			parts = append(parts, filepath.Base(p)+" none")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.1f MB", filepath.Base(p), float64(fi.Size())/1e6))
	}
	return strings.Join(parts, ", ")
}

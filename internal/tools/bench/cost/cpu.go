package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpuPhase counts the CPU of a wrapper whose child redraws a spinner, of
// one around an idle shell and of a bare pass-through of the same spinner
// (floor.go), all three over the same windows: o.windows of them, back to
// back, o.window in all.
//
// Why windows and not one long count: on a virtual machine whose steal
// time reads 0 (this one is a paravirtualised guest) a thread's run time
// holds what the host took from it and what waking an idle virtual CPU
// costs, and both come and go with the neighbours from one minute to the
// next: the floor, which runs no relay code, read 0.476 s a minute in one
// minute and 0.138 in the next. One long window averages such a spell into
// the figure unseen; short ones show it, beside the load of each. So the
// phase reports, for each measure, the median over the windows (the
// figure the bar is read against), the least window (the build's cost
// when nothing disturbed it) and all windows as one (what one long count
// read), and, window by window, the wrapper's CPU
// over the floor's and the wrapper's less the floor's per frame shown
// (what relay adds to a frame): both were measured in the same window, so
// what moved both cancels. The machine's busy share is printed beside
// each window, though a quiet machine is not always an undisturbed one:
// in two windows with the machine 5 % busy all three figures read twice
// what they read at 90 % (docs/performance-cpu.md, "What relay adds to a
// frame"); the host's spells are not in /proc/stat. With -against a second spinner is wrapped by
// that binary in the same windows, and its wrapper's CPU is compared with
// this one's window by window too.
func cpuPhase(ctx context.Context, h *harness, o options) ([]row, error) {
	spin, err := h.wrap("Spinner", false, h.self, "-child", "spinner")
	if err != nil {
		return nil, err
	}
	defer spin.stop()
	idle, err := h.wrap("Idle", false, "bash", "--norc", "--noprofile")
	if err != nil {
		return nil, err
	}
	defer idle.stop()
	bare, err := startTerm([]string{h.self, "-child", "floor"}, h.env(), h.dir, false)
	if err != nil {
		return nil, err
	}
	defer bare.stop()
	// script(1) passing the same spinner through: the C program the
	// start-up and pass-through bars are read against, as a second
	// reference beside the Go floor.
	scriptCPU := func() time.Duration { return 0 }
	if path, err := exec.LookPath("script"); err == nil {
		sc, err := startTerm([]string{path, "-qfc", h.self + " -child spinner", "/dev/null"}, h.env(), h.dir, false)
		if err != nil {
			return nil, err
		}
		defer sc.stop()
		scriptCPU = func() time.Duration { return cpuTime(sc.pid()) }
	}
	names := []string{"Spinner", "Idle"}
	other := func() time.Duration { return 0 }
	if o.against != "" {
		against, err := filepath.Abs(o.against)
		if err != nil {
			return nil, err
		}
		b, err := h.wrapWith(against, "Against", false, h.self, "-child", "spinner")
		if err != nil {
			return nil, err
		}
		defer b.stop()
		names = append(names, "Against")
		other = func() time.Duration { return cpuTime(b.pid()) }
	}
	if err := h.waitOnline(ctx, 20*time.Second, names...); err != nil {
		return nil, err
	}
	time.Sleep(settle)
	n := max(o.windows, 1)
	each := o.window / time.Duration(n)
	look := func() cpuMark {
		return cpuMark{at: time.Now(), spin: cpuTime(spin.pid()), idle: cpuTime(idle.pid()), bare: cpuTime(bare.pid()),
			against: other(), script: scriptCPU(), frames: spin.frames(), load: loadAvg(), busy: machineBusy()}
	}
	ws := make([]cpuWindow, 0, n)
	prev := look()
	for i := range n {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(each):
		}
		next := look()
		w := next.since(prev)
		ws = append(ws, w)
		prev = next
		fmt.Printf("cpu window %d/%d: %s\n", i+1, n, w)
	}
	return cpuRows(ws, o.against != ""), nil
}

// cpuMark is what the phase reads at the edge of a window.
type cpuMark struct {
	at               time.Time
	spin, idle, bare time.Duration // each process's CPU so far
	against          time.Duration // the -against spinner's wrapper's CPU so far, 0 without
	script           time.Duration // script(1)'s CPU so far, 0 without it
	frames           int64         // frames the spinner's wrapper showed so far
	load             string        // the one-minute load average
	busy             [2]uint64     // the machine's busy and total ticks so far
}

// cpuWindow is what one window measured.
type cpuWindow struct {
	length           time.Duration
	spin, idle, bare time.Duration // CPU of the spinner's wrapper, the idle one's, the floor's
	against          time.Duration // CPU of the -against spinner's wrapper
	script           time.Duration // CPU of script(1) passing the spinner through
	frames           int64         // frames the spinner's wrapper showed
	load             string        // the load average at the window's end
	busy             float64       // the share of the machine's CPUs busy (any process)
}

func (m cpuMark) since(p cpuMark) cpuWindow {
	w := cpuWindow{length: m.at.Sub(p.at), spin: m.spin - p.spin, idle: m.idle - p.idle, bare: m.bare - p.bare,
		against: m.against - p.against, script: m.script - p.script, frames: m.frames - p.frames, load: m.load, busy: -1}
	if total := m.busy[1] - p.busy[1]; total > 0 && p.busy[1] > 0 {
		w.busy = float64(m.busy[0]-p.busy[0]) / float64(total)
	}
	return w
}

// perMin returns d as seconds a minute of the window.
func (w cpuWindow) perMin(d time.Duration) float64 {
	return d.Seconds() * float64(time.Minute) / float64(w.length)
}

// ratio is the wrapper's CPU over the floor's.
func (w cpuWindow) ratio() float64 { return w.spin.Seconds() / max(w.bare.Seconds(), 1e-6) }

// overAgainst is the wrapper's CPU over the -against one's.
func (w cpuWindow) overAgainst() float64 { return w.spin.Seconds() / max(w.against.Seconds(), 1e-6) }

// added is the wrapper's CPU less the floor's for each frame it showed:
// what relay adds to a frame.
func (w cpuWindow) added() time.Duration {
	return (w.spin - w.bare) / time.Duration(max(w.frames, 1))
}

func (w cpuWindow) String() string {
	busy := "?"
	if w.busy >= 0 {
		busy = fmt.Sprintf("%.0f%%", 100*w.busy)
	}
	against := ""
	if w.against > 0 {
		against = fmt.Sprintf(", against %.3f (%.2fx)", w.perMin(w.against), w.overAgainst())
	}
	if w.script > 0 {
		against += fmt.Sprintf(", script %.3f", w.perMin(w.script))
	}
	return fmt.Sprintf("spinner %.3f s/min%s, floor %.3f, relay/floor %.2fx, relay-floor %v a frame (%d frames in %v); idle %.3f; load %s, machine %s busy",
		w.perMin(w.spin), against, w.perMin(w.bare), w.ratio(), w.added().Round(100*time.Nanosecond), w.frames,
		w.length.Round(10*time.Millisecond), w.perMin(w.idle), w.load, busy)
}

// cpuRows sums the windows up: for each measure the median and the least
// window, and the median of the per-window relation to the floor.
func cpuRows(ws []cpuWindow, against bool) []row {
	var spin, idle, bare, ratio, other, overOther, script, overScript []float64
	var added []time.Duration
	loads := make([]float64, 0, len(ws))
	var all cpuWindow // the windows as one, as the phase measured before it had windows
	for _, w := range ws {
		all.length, all.spin, all.idle, all.bare = all.length+w.length, all.spin+w.spin, all.idle+w.idle, all.bare+w.bare
		all.against += w.against
		all.script += w.script
		script, overScript = append(script, w.perMin(w.script)), append(overScript, w.spin.Seconds()/max(w.script.Seconds(), 1e-6))
		other, overOther = append(other, w.perMin(w.against)), append(overOther, w.overAgainst())
		spin, idle, bare = append(spin, w.perMin(w.spin)), append(idle, w.perMin(w.idle)), append(bare, w.perMin(w.bare))
		ratio, added = append(ratio, w.ratio()), append(added, w.added())
		if l, err := strconv.ParseFloat(w.load, 64); err == nil {
			loads = append(loads, l)
		}
	}
	span := fmt.Sprintf("%d windows of %v", len(ws), ws[0].length.Round(time.Second))
	if len(loads) > 0 {
		span += fmt.Sprintf("; load %.2f-%.2f", slices.Min(loads), slices.Max(loads))
	}
	fig := func(v []float64, whole time.Duration) string {
		return fmt.Sprintf("%.3f s/min median, %.3f the least window, %.3f all windows as one (%s)", median(v), slices.Min(v),
			all.perMin(whole), span)
	}
	rows := []row{
		{what: "wrapper CPU, 12.5 fps spinner child", figure: fig(spin, all.spin), bar: "<= 0.18 s/min"},
		{what: "wrapper CPU, idle wrapped bash", figure: fig(idle, all.idle), bar: "<= 0.03 s/min"},
		{what: "  reference: bare pass-through of the spinner", figure: fig(bare, all.bare), bar: "(no bar: the floor)"},
		{what: "  spinner's wrapper over the floor, window by window",
			figure: fmt.Sprintf("%.2fx median (%.2f-%.2fx); relay adds %v a frame, median (%v-%v)", median(ratio),
				slices.Min(ratio), slices.Max(ratio), median(added).Round(100*time.Nanosecond),
				slices.Min(added).Round(100*time.Nanosecond), slices.Max(added).Round(100*time.Nanosecond)),
			bar: "-"},
	}
	if all.script > 0 {
		rows = append(rows, row{what: "  reference: script -qfc passing the spinner through", figure: fig(script, all.script), bar: "(no bar: C)"},
			row{what: "  spinner's wrapper over script, window by window",
				figure: fmt.Sprintf("%.2fx median (%.2f-%.2fx)", median(overScript), slices.Min(overScript), slices.Max(overScript)), bar: "-"})
	}
	if against {
		rows = append(rows, row{what: "  -against's wrapper of the same spinner", figure: fig(other, all.against), bar: "<= 0.18 s/min"},
			row{what: "  spinner's wrapper over -against's, window by window",
				figure: fmt.Sprintf("%.2fx median (%.2f-%.2fx)", median(overOther), slices.Min(overOther), slices.Max(overOther)), bar: "-"})
	}
	return rows
}

// machineBusy returns the ticks all CPUs were busy and the ticks in all
// so far (/proc/stat's first line: busy is all but idle and iowait),
// zeros if unknown. Steal time counts as busy where the host reports it.
func machineBusy() [2]uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return [2]uint64{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return [2]uint64{}
	}
	var busy, total uint64
	for i, s := range f[1:] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return [2]uint64{}
		}
		if i >= 8 {
			break // guest time, counted in user already
		}
		total += v
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return [2]uint64{busy, total}
}

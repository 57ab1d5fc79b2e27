package e2e

// What a wrapper costs while its real agent CLI thinks (issue 34): Claude
// Code, Codex and Gemini CLI each get a prompt whose answer the mock model
// holds back, so that the CLI draws its spinner and status row for as long
// as the benchmark counts; the relay wrapper's CPU is counted beside
// script(1) passing the same CLI's output through (the C reference) and,
// when RELAY_BENCH_AGAINST names another relay binary, beside that binary
// wrapping a third instance, all in the same windows:
//
//	make build && RELAY_E2E_RELAY=$PWD/bin/relay RELAY_BENCH_AGAINST=/path/to/main/bin/relay \
//	  go test -tags sqlite_fts5 -run '^$' -bench '^BenchmarkThinkingCPU$' -benchtime 1x -timeout 30m ./internal/e2e
//
// `make bench` runs it with the CLI round trips (CLI_BENCH). The table is
// printed on standard output at the end.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

const (
	// thinkAgainstEnv names a second relay binary measured beside the one
	// under test (e.g. main's bin/relay).
	thinkAgainstEnv = "RELAY_BENCH_AGAINST"
	// thinkWindowEnv and thinkWindowsEnv set the count: windows of
	// thinkWindow each (a Go duration), thinkWindows of them.
	thinkWindowEnv  = "RELAY_BENCH_THINK_WINDOW"
	thinkWindowsEnv = "RELAY_BENCH_THINK_WINDOWS"
	// thinkRawEnv names a folder for each instance's raw output (the
	// frames a scanner would read: KIND-WHAT.raw).
	thinkRawEnv  = "RELAY_BENCH_THINK_RAW"
	thinkWindow  = 15 * time.Second
	thinkWindows = 4
	// thinkToken marks the prompt whose answer the model holds back.
	thinkToken = "think-1-x"
	// thinkCmd reproduces the table.
	thinkCmd = "make build && RELAY_E2E_RELAY=$PWD/bin/relay RELAY_BENCH_AGAINST=OTHER/bin/relay go test -tags sqlite_fts5 -run '^$' -bench '^BenchmarkThinkingCPU$' -benchtime 1x -timeout 30m ./internal/e2e"
)

// thinkArgs are the CLIs' arguments that make them draw as a user's do:
// the tests' Codex draws no animations (its offline config.toml), so it
// shows "Working (0s" until the answer comes.
var thinkArgs = map[string][]string{"codex": {"-c", "tui.animations=true"}}

// thinker is one instance of the CLI that is made to think: under relay
// wrap (this binary or the one compared against) or under script(1).
type thinker struct {
	what  string // "relay", "against", "script"
	model mockmodel.Server
	term  *agenttest.Term
	ready func(string) bool
}

// thinkWindowOf is one window's count: CPU of each instance's wrapper (or
// script) and of the relay instance's CLI, and what the CLI drew.
type thinkWindowOf struct {
	load   string
	cpu    map[string]time.Duration // by thinker.what
	cli    time.Duration            // the CLI under this relay: the process tree below the wrapper
	bytes  int                      // drawn through this relay's wrapper
	writes int                      // distinct writes that reached the terminal through it: frames
	gap    time.Duration            // their median interval
	from   time.Time
	length time.Duration
}

// thinkResult is one CLI's line of the table.
type thinkResult struct {
	kind    string
	windows []thinkWindowOf
	against bool
	script  bool
}

// BenchmarkThinkingCPU (issue 34): for each of Claude Code, Codex and
// Gemini CLI (skipped when not installed), the wrapper's CPU while the
// real CLI thinks, counted over windows beside script(1) and, with
// RELAY_BENCH_AGAINST, another relay binary.
func BenchmarkThinkingCPU(b *testing.B) {
	var results []*thinkResult
	for _, kind := range benchCLIs {
		b.Run(kind, func(b *testing.B) {
			res := &thinkResult{kind: kind}
			results = append(results, res)
			thinkingCPU(b, res)
		})
	}
	printThinkTable(results)
}

// thinkingCPU measures res.kind thinking into res.
func thinkingCPU(b *testing.B, res *thinkResult) {
	kind := res.kind
	bt := newBenchTeamOf(b, kind) // skips when the CLI is not installed
	env := relayVars(bt.env)
	window, n := thinkCount(b)
	gate := make(chan struct{})
	b.Cleanup(func() { close(gate) })
	script := func(r mockmodel.Request) mockmodel.Reply {
		if strings.Contains(r.LastUser, thinkToken) {
			return mockmodel.Reply{Text: "Done thinking.", Gate: gate}
		}
		return mockmodel.Reply{Text: "OK."}
	}
	// All started at once: a CLI takes up to a minute to start on a
	// loaded machine.
	all := []*thinker{startThinker(b, kind, "relay", env, relayBin, script)}
	if other := os.Getenv(thinkAgainstEnv); other != "" {
		all = append(all, startThinker(b, kind, "against", env, other, script))
		res.against = true
	}
	if sc, err := exec.LookPath("script"); err == nil {
		all = append(all, startThinker(b, kind, "script", env, sc, script))
		res.script = true
	}
	for _, t := range all {
		t.waitReady(b, kind)
	}
	for _, t := range all {
		t.think(b, kind)
	}
	b.ResetTimer()
	relay := all[0]
	writes := watchWrites(relay.term, time.Duration(b.N*n)*window+5*time.Second)
	prev := sampleThink(all)
	for w := 0; w < b.N*n; w++ {
		time.Sleep(window)
		cur := sampleThink(all)
		win := cur.since(prev)
		win.bytes = cur.bytes - prev.bytes
		prev = cur
		res.windows = append(res.windows, win)
		if win.bytes == 0 {
			b.Fatalf("%s drew nothing in window %d: not thinking?\n%s", kind, w+1, relay.screen(b))
		}
		for _, t := range all {
			if t.ready(t.screen(b)) {
				b.Fatalf("%s under %s is idle in window %d, not thinking:\n%s", kind, t.what, w+1, t.screen(b))
			}
		}
	}
	b.StopTimer()
	times := <-writes
	for i := range res.windows {
		w := &res.windows[i]
		w.writes, w.gap = writesIn(times, w.from, w.from.Add(w.length))
	}
	if dir := os.Getenv(thinkRawEnv); dir != "" {
		for _, t := range all {
			if err := t.term.WriteRaw(filepath.Join(dir, kind+"-"+t.what+".raw")); err != nil {
				b.Error(err)
			}
		}
	}
	reportThink(b, res)
}

// thinkCount returns the window and how many of them.
func thinkCount(tb testing.TB) (time.Duration, int) {
	window, n := thinkWindow, thinkWindows
	if s := os.Getenv(thinkWindowEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			tb.Fatalf("%s=%q: want a positive duration", thinkWindowEnv, s)
		}
		window = d
	}
	if s := os.Getenv(thinkWindowsEnv); s != "" {
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			tb.Fatalf("%s=%q: want a positive number", thinkWindowsEnv, s)
		}
	}
	return window, n
}

// startThinker starts kind under bin: `relay wrap` when what is "relay"
// or "against", script -qfc for "script", its own mock model answering
// with script.
func startThinker(tb testing.TB, kind, what string, env []string, bin string, script mockmodel.Script) *thinker {
	tb.Helper()
	off, err := agenttest.OfflineOf(kind)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := mockmodel.Start(off.API, mockmodel.Options{Script: script})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.Close)
	cmd := agenttest.OfflineCLI(tb, kind, agenttest.OfflineOptions{Model: m.URL, Cols: 100, Rows: 30, Env: env, ExtraArgs: thinkArgs[kind]})
	switch what {
	case "script":
		// script(1) runs its command with $SHELL -c: one string.
		cmd.Argv = []string{bin, "-qfc", shellJoin(cmd.Argv), "/dev/null"}
	default:
		cmd = cmd.Under(bin, "wrap", "--name", "Thinker-"+what, "--")
	}
	term := agenttest.Start(tb, cmd)
	stopGently(tb, term)
	return &thinker{what: what, model: m, term: term, ready: off.Ready}
}

// shellJoin quotes argv for sh -c.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return "exec " + strings.Join(q, " ")
}

// screen renders t's terminal.
func (t *thinker) screen(tb testing.TB) string {
	cols, rows := t.term.Size()
	return agenttest.TmuxScreen(tb, t.term.Raw(), cols, rows)
}

// waitReady waits until the CLI shows its idle input row and, under relay
// with a CLI that gets its primer typed, until that turn is over.
func (t *thinker) waitReady(tb testing.TB, kind string) {
	tb.Helper()
	if _, err := t.term.WaitReady(cliStartWait, t.ready); err != nil {
		tb.Fatalf("%s under %s did not get ready: %v\n%s", kind, t.what, err, t.screen(tb))
	}
	if p, err := registry.Named(kind); err != nil || !p.TypePrimer || t.what == "script" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	req, err := t.model.WaitForRequest(ctx, `You are agent "Thinker-`+t.what+`"`)
	if err == nil {
		_, err = t.model.WaitReplied(ctx, req.Turn)
	}
	if err != nil {
		tb.Fatalf("%s under %s: the primer's turn: %v\n%s", kind, t.what, err, t.screen(tb))
	}
	if _, err := t.term.WaitReady(120*time.Second, t.ready); err != nil {
		tb.Fatalf("%s under %s did not get idle after its primer: %v\n%s", kind, t.what, err, t.screen(tb))
	}
}

// think submits the prompt whose answer the model holds back, waits for
// its turn, and checks that the CLI then keeps drawing (its spinner turns).
func (t *thinker) think(tb testing.TB, kind string) {
	tb.Helper()
	prompt := "take your time with " + thinkToken
	has := func() bool { return t.model.Count(thinkToken) > 0 }
	if _, err := t.term.SubmitConfirm(prompt, 300*time.Millisecond, 120*time.Second, has); err != nil {
		tb.Fatalf("%s under %s: %v\n%s", kind, t.what, err, t.screen(tb))
	}
	// A second after the turn began the CLI still draws: its spinner.
	time.Sleep(time.Second)
	before := t.term.OutputLen()
	if err := t.term.WaitFor(10*time.Second, func(raw []byte) bool { return len(raw) > before+64 }); err != nil {
		tb.Fatalf("%s under %s draws nothing while it thinks: %v\n%s", kind, t.what, err, t.screen(tb))
	}
}

// thinkSample is the counters at one moment.
type thinkSample struct {
	at    time.Time
	cpu   map[string]time.Duration
	cli   time.Duration
	bytes int
}

func sampleThink(all []*thinker) thinkSample {
	s := thinkSample{at: time.Now(), cpu: map[string]time.Duration{}}
	for _, t := range all {
		s.cpu[t.what] = procCPU(t.term.Pid())
	}
	relay := all[0].term.Pid()
	for _, pid := range descendants(relay) {
		s.cli += procCPU(pid)
	}
	s.bytes = all[0].term.OutputLen()
	return s
}

// since is the window from p to s.
func (s thinkSample) since(p thinkSample) thinkWindowOf {
	w := thinkWindowOf{load: loadAvg1(), cpu: map[string]time.Duration{}, cli: s.cli - p.cli, from: p.at, length: s.at.Sub(p.at)}
	for k, v := range s.cpu {
		w.cpu[k] = v - p.cpu[k]
	}
	return w
}

// perMin is d as seconds a minute of window w.
func (w thinkWindowOf) perMin(d time.Duration) float64 {
	return d.Seconds() * float64(time.Minute) / float64(w.length)
}

// watchWrites records for d when term's output grows: each time is one
// write of the wrapper's to the terminal (the pass-through writes what each
// read of the CLI's pty returned), so they are the CLI's frames as the
// wrapper sees them, and their intervals its spinner's cadence.
func watchWrites(term *agenttest.Term, d time.Duration) <-chan []time.Time {
	ch := make(chan []time.Time, 1)
	go func() {
		var times []time.Time
		last := term.OutputLen()
		_ = term.WaitFor(d, func(raw []byte) bool {
			if len(raw) > last {
				times, last = append(times, time.Now()), len(raw)
			}
			return false
		})
		ch <- times
	}()
	return ch
}

// writesIn returns how many of times fall in [from, to), and the median
// interval between them.
func writesIn(times []time.Time, from, to time.Time) (int, time.Duration) {
	var in []time.Time
	for _, t := range times {
		if !t.Before(from) && t.Before(to) {
			in = append(in, t)
		}
	}
	var gaps []time.Duration
	for i := 1; i < len(in); i++ {
		gaps = append(gaps, in[i].Sub(in[i-1]))
	}
	if len(gaps) == 0 {
		return len(in), 0
	}
	slices.Sort(gaps)
	return len(in), gaps[len(gaps)/2]
}

// reportThink reports the medians and least windows of res.
func reportThink(b *testing.B, res *thinkResult) {
	med := func(f func(w thinkWindowOf) float64) (float64, float64) {
		var v []float64
		for _, w := range res.windows {
			v = append(v, f(w))
		}
		slices.Sort(v)
		if len(v) == 0 {
			return 0, 0
		}
		return v[len(v)/2], v[0]
	}
	m, least := med(func(w thinkWindowOf) float64 { return w.perMin(w.cpu["relay"]) })
	b.ReportMetric(m, "relay-s/min")
	b.ReportMetric(least, "relay-least-s/min")
	fps, _ := med(func(w thinkWindowOf) float64 { return float64(w.writes) / w.length.Seconds() })
	b.ReportMetric(fps, "frames/s")
	cli, _ := med(func(w thinkWindowOf) float64 { return w.perMin(w.cli) })
	b.ReportMetric(cli, "cli-s/min")
	if res.script {
		s, _ := med(func(w thinkWindowOf) float64 { return w.perMin(w.cpu["script"]) })
		r, _ := med(func(w thinkWindowOf) float64 { return ratio(w.cpu["relay"], w.cpu["script"]) })
		b.ReportMetric(s, "script-s/min")
		b.ReportMetric(r, "relay/script")
	}
	if res.against {
		s, _ := med(func(w thinkWindowOf) float64 { return w.perMin(w.cpu["against"]) })
		r, _ := med(func(w thinkWindowOf) float64 { return ratio(w.cpu["relay"], w.cpu["against"]) })
		b.ReportMetric(s, "against-s/min")
		b.ReportMetric(r, "relay/against")
	}
	b.ReportMetric(0, "ns/op")
}

func ratio(a, b time.Duration) float64 { return a.Seconds() / max(b.Seconds(), 1e-6) }

// printThinkTable prints each CLI's windows.
func printThinkTable(results []*thinkResult) {
	if len(results) == 0 {
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "\nreal CLIs thinking: CPU s a minute of each wrapper (relay under test, %s, script -qfc) and of the CLI, window by window;\n", thinkAgainstEnv)
	fmt.Fprintln(tw, "frames: the writes that reached the terminal through the relay under test, and their median interval")
	fmt.Fprintln(tw, "CLI\twindow\tload\trelay\tagainst\tscript\trelay/against\trelay/script\tCLI itself\tframes/s\tmedian gap\tKB/s")
	for _, r := range results {
		for i, w := range r.windows {
			against, script, ra, rs := "-", "-", "-", "-"
			if r.against {
				against = fmt.Sprintf("%.3f", w.perMin(w.cpu["against"]))
				ra = fmt.Sprintf("%.2f×", ratio(w.cpu["relay"], w.cpu["against"]))
			}
			if r.script {
				script = fmt.Sprintf("%.3f", w.perMin(w.cpu["script"]))
				rs = fmt.Sprintf("%.2f×", ratio(w.cpu["relay"], w.cpu["script"]))
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%.3f\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t%v\t%.1f\n", cliName(r.kind), i+1, w.load,
				w.perMin(w.cpu["relay"]), against, script, ra, rs, w.perMin(w.cli),
				float64(w.writes)/w.length.Seconds(), w.gap.Round(time.Millisecond),
				float64(w.bytes)/1024/w.length.Seconds())
		}
	}
	tw.Flush()
	fmt.Printf("reproduce: %s\n\n", thinkCmd)
}

// procCPU returns the CPU time process pid has used: the run time of its
// threads to the nanosecond (/proc/PID/task/*/schedstat; user and system
// time in /proc/PID/stat count 10 ms ticks, and a wrapper's window is a
// handful of them), as the cost bench counts (internal/tools/bench/cost);
// 0 if it is gone.
func procCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// descendants returns the processes below pid (/proc/PID/task/*/children).
func descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			var c int
			if _, err := fmt.Sscan(f, &c); err == nil {
				out = append(out, c)
				out = append(out, descendants(c)...)
			}
		}
	}
	return out
}

// loadAvg1 returns the machine's one-minute load average.
func loadAvg1() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

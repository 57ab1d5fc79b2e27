// Command latency measures the whole message path of the real relay binary:
// one wrapped agent writes "@relay:Bob …", the wrapper reads it off the
// screen, sends it through an embedded hub, and Bob's wrapper types it into
// Bob's stdin. It reports, with the command that reproduces each figure:
//
//   - latency: p50/p99/max from the write to Bob's read, split at the hub,
//     with Bob idle (his wrapper says so) and, beside it, with each message
//     sent as the one before arrives; again with delivery.idle_quiet_ms
//     lowered (-quiet); and a raw NATS request/reply on the same hub as the
//     floor;
//   - throughput: messages per second with many in flight, against raw
//     NATS publish on the same hub;
//   - burst: 20 messages sent back-to-back to an idle agent, in the default
//     (batch), wait and queue delivery modes, from a bus client and from
//     `relay send`;
//   - success: 50 messages from wrapped agents, how many arrive, how many
//     twice.
//
// The agents are a small program (./agent) wrapped by `relay wrap` with a
// pipe for stdin (no human), each with a configuration of its own
// (XDG_CONFIG_HOME) so that the user's files play no part. A wrapped agent
// may send a peer at most 10 messages a minute (loop damping), so with the
// defaults the wrapped senders take turns: a fresh one every -per messages.
//
//	go run -tags sqlite_fts5 ./internal/tools/bench/latency -relay bin/relay [-n 200] [-phases latency,throughput,burst,success] [-keep]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
)

// options are the command's flags.
type options struct {
	relay      string
	n          int // latency samples
	per        int // messages per wrapped sender (the damper allows 10/min)
	burst      int
	success    int
	throughput int
	floor      int
	wburst     int   // one undamped sender's burst in the throughput run
	quiet      []int // idle quiet times (ms) to try in the latency run
	knobN      int   // latency samples for each of them
	phases     map[string]bool
	keep       bool // keep the temporary folder (wrapper logs) for a look
}

// row is one line of the final table.
type row struct {
	what, figure, bar, cmd string
}

func main() {
	var o options
	var phases string
	flag.StringVar(&o.relay, "relay", "bin/relay", "the relay binary")
	flag.IntVar(&o.n, "n", 200, "latency samples (messages sent one at a time)")
	flag.IntVar(&o.per, "per", 10, "messages per wrapped sender before a fresh one takes over (loop damping allows 10 a minute)")
	flag.IntVar(&o.burst, "burst", 20, "messages in the burst")
	flag.IntVar(&o.success, "success", 50, "messages in the success-rate run")
	flag.IntVar(&o.throughput, "throughput", 1000, "messages in the throughput run")
	flag.IntVar(&o.floor, "floor", 2000, "raw NATS request/reply round trips")
	flag.IntVar(&o.wburst, "wburst", 300, "messages one undamped wrapped sender writes at once in the throughput run")
	quiet := flag.String("quiet", "100,20", "delivery.idle_quiet_ms values to measure latency with, beside the default")
	flag.IntVar(&o.knobN, "knob-n", 30, "latency samples for each -quiet value")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary folder (hub, wrapper logs and output) and print its path")
	flag.StringVar(&phases, "phases", "latency,throughput,burst,success", "which measurements to run")
	cpuprofile := flag.String("cpuprofile", "", "write this process's CPU profile (the embedded hub, the bench's sender and tap) to `file`")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "latency: -cpuprofile: %v\n", err)
			os.Exit(2)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	for _, q := range strings.Split(*quiet, ",") {
		if q = strings.TrimSpace(q); q == "" {
			continue
		}
		v, err := strconv.Atoi(q)
		if err != nil || v <= 0 {
			fmt.Fprintf(os.Stderr, "latency: -quiet: %q is not a positive number of milliseconds\n", q)
			os.Exit(2)
		}
		o.quiet = append(o.quiet, v)
	}
	o.phases = map[string]bool{}
	for _, p := range strings.Split(phases, ",") {
		o.phases[strings.TrimSpace(p)] = true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rows, err := run(ctx, o)
	printTable(rows)
	if err != nil {
		fmt.Fprintln(os.Stderr, "latency:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) ([]row, error) {
	h, err := newHarness(ctx, o.relay)
	if err != nil {
		return nil, err
	}
	defer h.close(o.keep)
	base := "go run -tags sqlite_fts5 ./internal/tools/bench/latency -relay " + o.relay
	var rows []row
	steps := []struct {
		name string
		fn   func(context.Context, *harness, options, string) ([]row, error)
	}{
		{"latency", latency},
		{"throughput", throughput},
		{"burst", burst},
		{"success", success},
	}
	for _, st := range steps {
		if !o.phases[st.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "latency: measuring %s…\n", st.name)
		r, err := st.fn(ctx, h, o, base+" -phases "+st.name)
		rows = append(rows, r...)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return rows, nil
}

func printTable(rows []row) {
	if len(rows) == 0 {
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tfigure\tbar")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.what, r.figure, r.bar)
	}
	tw.Flush()
	fmt.Println()
	seen := map[string]bool{}
	for _, r := range rows {
		if r.cmd != "" && !seen[r.cmd] {
			seen[r.cmd] = true
			fmt.Println("reproduce:", r.cmd)
		}
	}
}

// seqs hands out message numbers, unique across the whole run, so that the
// hub tap can tell every message apart.
type seqs struct{ next int64 }

func (s *seqs) take(n int) int64 {
	first := s.next + 1
	s.next += int64(n)
	return first
}

// floorRTT is a raw NATS request/reply round trip on the same hub.
func floorRTT(h *harness, n int) (dist, error) {
	sub, err := h.nc.Subscribe("bench.echo", func(m *nats.Msg) { _ = m.Respond(m.Data) })
	if err != nil {
		return dist{}, err
	}
	defer sub.Unsubscribe()
	req, err := nats.Connect(h.hub.URL(), nats.Token(h.hub.Token()))
	if err != nil {
		return dist{}, err
	}
	defer req.Close()
	if err := h.nc.Flush(); err != nil {
		return dist{}, err
	}
	ds := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := req.Request("bench.echo", []byte("ping"), 2*time.Second); err != nil {
			return dist{}, fmt.Errorf("request %d: %w", i, err)
		}
		ds = append(ds, time.Since(t0))
	}
	return summarise(ds), nil
}

// floorRate publishes n raw NATS messages as fast as it can and counts
// them at a subscriber on its own connection to the same hub.
func floorRate(h *harness, n int) (string, error) {
	subc, err := nats.Connect(h.hub.URL(), nats.Token(h.hub.Token()))
	if err != nil {
		return "", err
	}
	defer subc.Close()
	var got atomic.Int64
	done := make(chan time.Time, 1)
	sub, err := subc.Subscribe("bench.rate", func(*nats.Msg) {
		if got.Add(1) == int64(n) {
			done <- time.Now()
		}
	})
	if err != nil {
		return "", err
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return "", err
	}
	if err := subc.Flush(); err != nil {
		return "", err
	}
	pub, err := nats.Connect(h.hub.URL(), nats.Token(h.hub.Token()))
	if err != nil {
		return "", err
	}
	defer pub.Close()
	payload := []byte("seq=0 t=0000000000000000000")
	t0 := time.Now()
	for i := 0; i < n; i++ {
		if err := pub.Publish("bench.rate", payload); err != nil {
			return "", err
		}
	}
	if err := pub.Flush(); err != nil {
		return "", err
	}
	select {
	case end := <-done:
		d := end.Sub(t0)
		return fmt.Sprintf("%.0f msg/s (%d in %s)", float64(n)/d.Seconds(), n, ms(d)), nil
	case <-time.After(10 * time.Second):
		return "", fmt.Errorf("only %d of %d raw messages arrived", got.Load(), n)
	}
}

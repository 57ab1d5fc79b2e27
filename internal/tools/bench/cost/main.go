// Command cost measures what one relay wrapper costs its machine, each
// figure beside its bar (issue 34), with the human's terminal a
// pseudo-terminal as it is for a person:
//
//   - cpu: the wrapper's CPU seconds a minute with a child that redraws a
//     12.5 fps spinner line (Claude Code's "Thinking…" style), and with an
//     idle wrapped shell;
//   - rss: the wrapper's resident memory idle, and its peak after a
//     5,000-message stream into the wrapped shell;
//   - start: `relay wrap -- true` against `script -qc true`;
//   - pass: 50 MB of `cat` shown through a pty, against `script -qc`,
//     read by a terminal that is a process of its own with a plain read
//     loop, as a person's terminal emulator is (reader.go); beside it the
//     same read by a goroutine of this program, the figure it gave before,
//     and through tmux where installed (pass.go);
//   - fleet: 100 wrapped shells on one hub: how long after the last start
//     until all are online, and one message to each (sent one at a time,
//     timed from the send until its text is on that shell's terminal).
//
// Every wrapper joins an embedded hub that this program runs, with its
// own empty configuration, as a user's wrapper joins the hub `relay up`
// runs in a process of its own: the wrapper hosts no hub (`--hub URL`),
// so none of the hub's costs (JetStream's timers, nats-server's sampling
// of /proc) are in its figures. CPU and memory are the wrapper process's
// alone (/proc/PID/task/*/schedstat and status), never its child's. The
// CPU phase also measures a bare pass-through of the same spinner (floor.go),
// the least any Go program showing it pays on this machine, over the same
// windows: several short ones (8 of 15 s unless -window and -windows say
// otherwise), each printed with the load, and summed up as the median and
// the least window of each measure, and the wrapper's CPU over the floor's
// and less it per frame, window by window. On a virtual machine that hides
// its steal time (this one) one long window is one sample of the
// neighbours' weather; cpu.go says why.
//
//	go run -tags sqlite_fts5 ./internal/tools/bench/cost -relay bin/relay [-phases cpu,rss,start,pass,fleet] [-window 2m -windows 8]
//	    [-base MAIN/bin/relay] [-against MAIN/bin/relay] [-readers own,goroutine,tmux]
//
// updatemaxprocs=0, as relay's: the floor runs the runtime as relay wrap
// does, with no wake-up a second to update GOMAXPROCS.
//
//go:debug updatemaxprocs=0
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
)

// options are the command's flags.
type options struct {
	relay    string
	base     string        // another relay binary to compare the start with, run in turn
	window   time.Duration // how long CPU is counted, in all
	windows  int           // in how many windows, back to back
	messages int           // the stream for the peak RSS
	runs     int           // start-up and pass-through runs of each command
	sizeMB   int
	against  string // a second relay binary for the pass-through, run in turn
	shells   int
	phases   map[string]bool
	readers  map[string]bool // the pass-through's human terminals
	// readersFlag is -readers when not all, for the reproduce line.
	readersFlag string
}

// allReaders are the pass-through's terminals by default (pass.go).
const allReaders = "own,goroutine,tmux"

// row is one line of the final table.
type row struct{ what, figure, bar, cmd string }

func main() {
	if len(os.Args) > 2 && os.Args[1] == "-child" {
		child(os.Args[2], os.Args[3:])
		return
	}
	var o options
	var phases, readers string
	flag.StringVar(&o.relay, "relay", "bin/relay", "the relay binary (make build: the lean relay that make install installs, relay-hub beside it)")
	flag.StringVar(&o.base, "base", "", "another relay binary (main's bin/relay, say): the start rows compare -relay with it, run in turn")
	flag.DurationVar(&o.window, "window", 2*time.Minute, "how long the wrappers' CPU is counted, in all")
	flag.IntVar(&o.windows, "windows", 8, "in how many windows of -window/-windows, each printed; the median and the least count")
	flag.IntVar(&o.messages, "messages", 5000, "messages in the stream for the peak RSS")
	flag.IntVar(&o.runs, "runs", 7, "runs of each command for start-up and pass-through; the median counts")
	flag.IntVar(&o.sizeMB, "size", 50, "MB shown in the pass-through run")
	flag.StringVar(&o.against, "against", "", "a second relay binary (main's): the pass-through runs it in turn with relay and script, the CPU phase wraps a second spinner with it in the same windows")
	flag.IntVar(&o.shells, "shells", 100, "wrapped shells in the fleet run")
	flag.StringVar(&phases, "phases", "cpu,rss,start,pass,fleet", "which measurements to run")
	flag.StringVar(&readers, "readers", allReaders, "the pass-through's terminals: own (a reader process), goroutine (the bench's), tmux")
	flag.Parse()
	o.readers = map[string]bool{}
	if readers != allReaders {
		o.readersFlag = readers
	}
	for _, r := range strings.Split(readers, ",") {
		o.readers[strings.TrimSpace(r)] = true
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
		fmt.Fprintln(os.Stderr, "cost:", err)
		os.Exit(1)
	}
}

// harness is one run: the hub, the relay binary and a temporary folder.
type harness struct {
	relay string
	self  string // this program, for its -child modes
	dir   string
	hub   *hub.Hub
	bc    *bus.Client // sends as "Bench" and lists agents
}

func run(ctx context.Context, o options) ([]row, error) {
	h := &harness{}
	var err error
	if h.relay, err = filepath.Abs(o.relay); err != nil {
		return nil, err
	}
	if _, err := os.Stat(h.relay); err != nil {
		return nil, fmt.Errorf("relay binary: %w (build it with make build)", err)
	}
	if h.self, err = os.Executable(); err != nil {
		return nil, err
	}
	if h.dir, err = os.MkdirTemp("", "relay-cost-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(h.dir)
	if err := os.MkdirAll(filepath.Join(h.dir, "xdg", "relay"), 0o700); err != nil {
		return nil, err
	}
	h.hub, err = hub.Start(ctx, hub.Options{Home: filepath.Join(h.dir, "hub"), Listen: "127.0.0.1:0"})
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	defer h.hub.Shutdown()
	h.bc, err = bus.Connect(ctx, bus.Options{URL: h.hub.URL(), Token: h.hub.Token(), Name: "Bench"})
	if err != nil {
		return nil, fmt.Errorf("bus client: %w", err)
	}
	defer h.bc.Close()
	base := "go run -tags sqlite_fts5 ./internal/tools/bench/cost -relay " + o.relay
	if o.base != "" {
		base += " -base " + o.base
	}
	if o.against != "" {
		base += " -against " + o.against
	}
	if o.readersFlag != "" {
		base += " -readers " + o.readersFlag
	}
	steps := []struct {
		name string
		fn   func(context.Context, *harness, options) ([]row, error)
	}{
		{"cpu", cpuPhase},
		{"rss", rssPhase},
		{"start", startPhase},
		{"pass", passPhase},
		{"fleet", fleetPhase},
	}
	var rows []row
	for _, st := range steps {
		if !o.phases[st.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "cost: measuring %s…\n", st.name)
		r, err := st.fn(ctx, h, o)
		for i := range r {
			r[i].cmd = base + " -phases " + st.name
		}
		rows = append(rows, r...)
		if err != nil {
			return rows, fmt.Errorf("%s: %w", st.name, err)
		}
	}
	return rows, nil
}

// env is the environment of a wrapper: the hub, an empty configuration.
func (h *harness) env() []string {
	return append(os.Environ(), "RELAY_HOME="+filepath.Join(h.dir, "home"), "RELAY_TOKEN="+h.hub.Token(),
		"TERM=xterm-256color", "XDG_CONFIG_HOME="+filepath.Join(h.dir, "xdg"), "PS1=$ ")
}

// wrap starts `relay wrap --hub URL --name NAME -- ARGV` in a terminal of
// its own.
func (h *harness) wrap(name string, keep bool, argv ...string) (*term, error) {
	return h.wrapWith(h.relay, name, keep, argv...)
}

// wrapWith is wrap with another relay binary.
func (h *harness) wrapWith(relay, name string, keep bool, argv ...string) (*term, error) {
	args := append([]string{relay, "wrap", "--hub", h.hub.URL(), "--name", name, "--"}, argv...)
	return startTerm(args, h.env(), h.dir, keep)
}

// waitOnline waits until the hub lists every name online.
func (h *harness) waitOnline(ctx context.Context, timeout time.Duration, names ...string) error {
	deadline := time.Now().Add(timeout)
	for {
		list, err := h.bc.Agents(ctx)
		if err == nil {
			on := map[string]bool{}
			for _, a := range list {
				if a.State != bus.StateOffline {
					on[a.Name] = true
				}
			}
			missing := 0
			for _, n := range names {
				if !on[n] {
					missing++
				}
			}
			if missing == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d of %d not online after %v", missing, len(names), timeout)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	seen := map[string]bool{}
	for _, r := range rows {
		if r.cmd != "" && !seen[r.cmd] {
			seen[r.cmd] = true
			fmt.Println("reproduce:", r.cmd)
		}
	}
}

// child runs one of the programs the bench wraps. Like every relay
// process it stops nats-server's once-a-second sampling of /proc, which
// this binary links through the hub: the floor would pay a wake-up a
// second that relay does not.
func child(mode string, args []string) {
	hub.StopProcSampling()
	switch mode {
	case "reader":
		readerChild(args)
	case "spinner":
		spinner()
	case "floor":
		floor()
	default:
		fmt.Fprintln(os.Stderr, "cost: unknown child", mode)
		os.Exit(2)
	}
}

// spinner draws what a model CLI shows while it thinks: a few rows of
// conversation, then a status line redrawn at 12.5 fps with a turning
// glyph and the seconds counted, until it is killed or its terminal is
// gone (a spinner that ignores SIGHUP would otherwise draw on, unseen).
func spinner() {
	fmt.Print("> refactor the parser and run the tests\r\n\r\n● I'll start by reading the parser.\r\n\r\n")
	glyphs := []string{"·", "✢", "✳", "✶", "✻", "✽", "✻", "✶", "✳", "✢"}
	start := time.Now()
	t := time.NewTicker(80 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		secs := int(time.Since(start).Seconds())
		if _, err := fmt.Printf("\r\x1b[2K%s Thinking… (%ds · esc to interrupt)", glyphs[i%len(glyphs)], secs); err != nil {
			return
		}
		<-t.C
	}
}

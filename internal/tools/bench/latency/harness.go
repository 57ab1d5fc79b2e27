package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub"
)

// harness is one benchmark run: an embedded hub, the relay binary, the
// scripted agent program and the wrappers started so far.
type harness struct {
	relay string
	agent string // the built agent program
	dir   string
	hub   *hub.Hub
	nc    *nats.Conn  // the bench's own connection (tap, floor)
	bc    *bus.Client // sends as "Bench" and lists agents

	mu    sync.Mutex
	busAt map[int64]time.Time // seq → when the envelope crossed the hub
	procs []*wrapped
	seq   seqs // message numbers, unique in the run
}

func newHarness(ctx context.Context, relayBin string) (*harness, error) {
	dir, err := os.MkdirTemp("", "relay-latency-")
	if err != nil {
		return nil, err
	}
	h := &harness{relay: relayBin, dir: dir, busAt: map[int64]time.Time{}}
	if h.relay, err = filepath.Abs(relayBin); err != nil {
		return nil, err
	}
	if _, err := os.Stat(h.relay); err != nil {
		return nil, fmt.Errorf("relay binary: %w (build it with make build)", err)
	}
	h.agent = filepath.Join(dir, "agent")
	build := exec.CommandContext(ctx, "go", "build", "-o", h.agent, "github.com/relayhq/relay/internal/tools/bench/latency/agent")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the bench agent: %v: %s", err, out)
	}
	h.hub, err = hub.Start(ctx, hub.Options{Home: filepath.Join(dir, "hub"), Listen: "127.0.0.1:0"})
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	h.nc, err = nats.Connect(h.hub.URL(), nats.Token(h.hub.Token()))
	if err != nil {
		return nil, fmt.Errorf("connect to hub: %w", err)
	}
	h.bc, err = bus.Connect(ctx, bus.Options{URL: h.hub.URL(), Token: h.hub.Token(), Name: "Bench"})
	if err != nil {
		return nil, fmt.Errorf("bus client: %w", err)
	}
	// The tap dates each message as it crosses the hub: the split between
	// the sender's side (screen → hub) and the receiver's (hub → stdin).
	// Direct sends come on relay.default.inbox.TO, wrapped agents' on
	// relay.default.inbox.TO.FROM.
	_, err = h.nc.Subscribe("relay.default.inbox.>", func(m *nats.Msg) {
		at := time.Now()
		var e bus.Envelope
		if json.Unmarshal(m.Data, &e) != nil {
			return
		}
		for _, s := range parseStamps(e.Body) {
			h.mu.Lock()
			if _, ok := h.busAt[s.seq]; !ok {
				h.busAt[s.seq] = at
			}
			h.mu.Unlock()
		}
	})
	if err != nil {
		return nil, err
	}
	return h, h.nc.Flush()
}

// busTime returns when message seq crossed the hub.
func (h *harness) busTime(seq int64) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, ok := h.busAt[seq]
	return t, ok
}

func (h *harness) close(keep bool) {
	for _, p := range h.procs {
		p.stop()
	}
	if h.bc != nil {
		h.bc.Close()
	}
	if h.nc != nil {
		h.nc.Close()
	}
	if h.hub != nil {
		h.hub.Shutdown()
	}
	if keep {
		fmt.Fprintln(os.Stderr, "latency: kept", h.dir)
		return
	}
	os.RemoveAll(h.dir)
}

// wrapped is one `relay wrap` process.
type wrapped struct {
	name  string
	cmd   *exec.Cmd
	stdin *os.File // the write end of its stdin pipe: no human ever types
	done  chan struct{}
}

func (p *wrapped) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// wrap starts `relay wrap --name NAME --delivery MODE -- ARGV` against the
// hub, with a pipe for stdin, and waits until the hub lists it online. cfg
// is the whole of its user configuration (TOML; "" for the defaults): the
// user's own files and the project's are out of the way.
func (h *harness) wrap(ctx context.Context, name, mode, cfg string, argv ...string) (*wrapped, error) {
	xdg := filepath.Join(h.dir, "xdg-"+name)
	if err := os.MkdirAll(filepath.Join(xdg, "relay"), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(xdg, "relay", "config.toml"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	args := append([]string{"wrap", "--hub", h.hub.URL(), "--name", name, "--delivery", mode, "--"}, argv...)
	cmd := exec.Command(h.relay, args...)
	cmd.Env = append(os.Environ(), "RELAY_HOME="+filepath.Join(h.dir, "home"), "RELAY_TOKEN="+h.hub.Token(),
		"TERM=xterm-256color", "XDG_CONFIG_HOME="+xdg)
	cmd.Dir = h.dir // no project configuration
	cmd.Stdin = r
	logf, err := os.Create(filepath.Join(h.dir, name+".out"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start relay wrap %s: %w", name, err)
	}
	r.Close()
	p := &wrapped{name: name, cmd: cmd, stdin: w, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); w.Close(); close(p.done) }()
	h.procs = append(h.procs, p)
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err := h.bc.Agents(ctx)
		if err == nil {
			for _, a := range list {
				if a.Name == name && a.State != bus.StateOffline {
					return p, nil
				}
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("relay wrap %s exited: see %s", name, logf.Name())
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is not online after 20s", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// arrival is one message as the receiving agent read it.
type arrival struct {
	seq  int64
	sent time.Time // when the sender wrote it (or the bench sent it)
	read time.Time // when the receiver read it from its stdin
}

// receiver is a wrapped recording agent and what it has read so far.
type receiver struct {
	*wrapped
	fifo *os.File
	mu   sync.Mutex
	got  []arrival
	wake chan struct{}
}

// startReceiver wraps the agent program in recv mode as name.
func (h *harness) startReceiver(ctx context.Context, name, mode, cfg string, raw bool) (*receiver, error) {
	path := filepath.Join(h.dir, name+".rec")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("mkfifo %s: %w", path, err)
	}
	// O_RDWR: the open does not wait for a writer, and the FIFO never
	// reports EOF between writers.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	rc := &receiver{fifo: f, wake: make(chan struct{}, 1)}
	go func() {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var seq, sent, read int64
			if _, err := fmt.Sscan(sc.Text(), &seq, &sent, &read); err != nil {
				continue
			}
			rc.mu.Lock()
			rc.got = append(rc.got, arrival{seq: seq, sent: time.Unix(0, sent), read: time.Unix(0, read)})
			rc.mu.Unlock()
			select {
			case rc.wake <- struct{}{}:
			default:
			}
		}
	}()
	argv := []string{h.agent, "recv", "-out", path}
	if raw {
		argv = append(argv, "-raw")
	}
	p, err := h.wrap(ctx, name, mode, cfg, argv...)
	if err != nil {
		return nil, err
	}
	rc.wrapped = p
	return rc, nil
}

// arrivals returns a copy of what arrived so far.
func (rc *receiver) arrivals() []arrival {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	// No copy: arrivals are only ever appended, and the bench reads them
	// on every arrival while the system under test shares its two cores.
	return rc.got[:len(rc.got):len(rc.got)]
}

// waitFor waits until cond holds for the arrivals or the timeout passes,
// and returns the arrivals and whether cond held.
func (rc *receiver) waitFor(timeout time.Duration, cond func([]arrival) bool) ([]arrival, bool) {
	deadline := time.After(timeout)
	for {
		got := rc.arrivals()
		if cond(got) {
			return got, true
		}
		select {
		case <-rc.wake:
		case <-deadline:
			return rc.arrivals(), false
		}
	}
}

// lastRead returns when the receiver last read a message.
func (rc *receiver) lastRead() time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var t time.Time
	for _, a := range rc.got {
		if a.read.After(t) {
			t = a.read
		}
	}
	return t
}

// stillIdle is how long after the last message an agent the hub lists as
// idle all along counts as idle: its wrapper reported no busy spell for
// the message (a shell ready again at the echo of the typed line is idle
// again before its presence would have changed), while a wrapper that does
// go busy for it says so within a few milliseconds of the read.
const stillIdle = 100 * time.Millisecond

// waitIdle waits until the hub lists name as idle since after the given
// time (its wrapper saw the agent idle again after the last message), or
// as idle all along, stillIdle after it.
func (h *harness) waitIdle(ctx context.Context, name string, after time.Time) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := h.bc.Agents(ctx)
		if err != nil {
			return err
		}
		for _, a := range list {
			if a.Name == name && a.State == bus.StateIdle && (a.Since.After(after) || time.Since(after) > stillIdle) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not idle 10s after its last message", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// has reports whether seq arrived.
func has(got []arrival, seq int64) bool {
	for _, a := range got {
		if a.seq == seq {
			return true
		}
	}
	return false
}

// sender is a wrapped agent that writes @relay: paragraphs on cue.
type sender struct {
	*wrapped
	ctl *os.File
}

// startSender wraps the agent program in send mode as name, writing to to.
func (h *harness) startSender(ctx context.Context, name, to, cfg string) (*sender, error) {
	path := filepath.Join(h.dir, name+".ctl")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("mkfifo %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	p, err := h.wrap(ctx, name, "wait", cfg, h.agent, "send", "-ctl", path, "-to", to)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &sender{wrapped: p, ctl: f}, nil
}

// cue makes the sender write n messages numbered from seq, in one write.
func (s *sender) cue(n int, seq int64) error {
	_, err := fmt.Fprintf(s.ctl, "%d %d\n", n, seq)
	return err
}

// finish ends the sender: EOF on its cues, then the wrapper exits.
func (s *sender) finish() {
	s.ctl.Close()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.stop()
	}
}

type stampT struct{ seq, sent int64 }

var stampRE = regexp.MustCompile(`seq=(\d+) t=(\d+)`)

func parseStamps(s string) []stampT {
	var out []stampT
	for _, m := range stampRE.FindAllStringSubmatch(s, -1) {
		seq, _ := strconv.ParseInt(m[1], 10, 64)
		sent, _ := strconv.ParseInt(m[2], 10, 64)
		out = append(out, stampT{seq, sent})
	}
	return out
}

// body is a stamped message body as the bench sends it over the bus.
func body(seq int64) string {
	return fmt.Sprintf("seq=%d t=%d", seq, time.Now().UnixNano())
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/ptytest"
)

// chaosSeedEnv sets the chaos soak's random seed, to repeat a run: every
// run logs its seed. (The timing of processes is not repeated, so a seed
// repeats the choice of actions and their pauses, not the interleaving.)
const chaosSeedEnv = "RELAY_CHAOS_SEED"

// chaosConfig sizes a chaos soak (chaos_short_test.go for make test,
// chaos_long_test.go for make soak).
type chaosConfig struct {
	agents   int           // wrapped agents, each a sender and a receiver
	chaos    time.Duration // how long the driver acts
	pace     time.Duration // a sender's pause between two messages
	maxPause time.Duration // the longest pause between two chaos actions
	maxStop  time.Duration // the longest SIGSTOP (past the 10 s ack wait)
	drain    time.Duration // how long the messages may take to arrive after the chaos
}

// The chaos driver's actions; each leaves the team whole again (every
// wrapper running, the hub up) before the next begins.
const (
	actKillWrapper = "kill -9 a wrapper, wrap the name again"
	actKillStopped = "kill -STOP a wrapper, kill -9 it, wrap the name again"
	actTermWrapper = "kill -TERM a wrapper (a clean end), wrap the name again"
	actStopWrapper = "kill -STOP a wrapper, then -CONT"
	actHubRestart  = "relay down, relay up --detach"
	actHubKill     = "kill -9 the hub, relay up --detach"
	actHubStop     = "kill -STOP the hub, then -CONT"
)

var chaosActions = []string{actKillWrapper, actKillStopped, actTermWrapper, actStopWrapper, actHubRestart, actHubKill, actHubStop}

// TestSoakChaos is issue 29's chaos soak: cfg.agents wrapped shells, each
// of which has a sender (`relay send --from NAME`, one process a message)
// send numbered messages to the others, while a driver SIGKILLs wrappers
// and wraps their names again, SIGSTOPs and SIGCONTs wrappers, restarts the
// hub (relay down, relay up --detach), SIGKILLs it and starts it again, and
// SIGSTOPs it. A wrapper stopped and then killed leaves messages the hub
// handed it unacknowledged (its inbox resumes in order next time); the
// first action does so to one unlucky name, which three ends of a wrapper
// in four hit, so that it lives through several sessions ended one way or
// the other (kill -9, kill -TERM). The actions come from a seeded random
// source (RELAY_CHAOS_SEED repeats one); every kind comes once in each
// round of seven. When the
// chaos ends and the team is whole, every message whose relay send
// succeeded arrives exactly once, in order per sender and target; no
// receipt in relay log says "delivered" of a message that did not arrive.
func TestSoakChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("a chaos soak of a minute or more")
	}
	cfg := chaosSize
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(chaosSeedEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%s: %v", chaosSeedEnv, s, err)
		}
		seed = n
	}
	t.Logf("chaos seed %d (%s=%d repeats the actions)", seed, chaosSeedEnv, seed)

	cr := &chaosRun{t: t, hp: startHubProc(t), rng: rand.New(rand.NewPCG(seed, 0)), dir: t.TempDir(),
		start: time.Now(), terms: map[string]*ptytest.Term{}, acts: map[string]int{}}
	for i := range cfg.agents {
		cr.names = append(cr.names, fmt.Sprintf("Chaos%c", 'A'+i))
	}
	cr.unlucky = cr.names[cr.rng.IntN(len(cr.names))]
	for _, n := range cr.names {
		cr.startAgent(n)
	}
	defer func() {
		if t.Failed() {
			t.Log(cr.diagnosis())
		}
	}()

	ctx, stopSending := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, n := range cr.names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr.sender(ctx, n, rand.New(rand.NewPCG(seed, uint64(i+1))), cfg.pace)
		}()
	}
	t.Cleanup(func() { stopSending(); wg.Wait() })

	// The actions, in rounds of every kind in random order; the chaos
	// ends with a round, so that each kind ran at least once.
	bag := []string{actKillStopped}
	rounds := 0
	for end := time.Now().Add(cfg.chaos); time.Now().Before(end) || len(bag) > 0 || rounds == 0; {
		time.Sleep(cr.randDuration(200*time.Millisecond, cfg.maxPause)) // the chaos's own pace
		if len(bag) == 0 {
			bag = append(bag, chaosActions...)
			cr.rng.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
			rounds++
		}
		act := bag[0]
		bag = bag[1:]
		cr.act(act, cfg)
	}
	stopSending()
	wg.Wait()
	t.Logf("chaos over after %v: %s; %s", cr.since().Round(time.Second), cr.actionCounts(), cr.sendCounts())

	cr.drain(cfg.drain)
	t.Logf("the wrappers' logs: %s", cr.logEvents())
	v := cr.verdict()
	if v.failed() {
		t.Errorf("the chaos soak broke relay's promises:\n%s", v)
	} else if len(v.notes) > 0 {
		t.Logf("%s", v)
	}
}

// chaosRun is the state of one chaos soak. The driver (the test's
// goroutine) owns terms and the counts; the senders append to sent under mu.
type chaosRun struct {
	t     *testing.T
	hp    *hubProc
	rng   *rand.Rand
	dir   string
	start time.Time
	names []string

	terms    map[string]*ptytest.Term // the running wrapper of each name
	unlucky  string                   // the name most kills hit
	acts     map[string]int           // how many times each action ran
	journal  []string                 // what the driver did, when
	refused  int                      // wraps of a killed name refused as taken
	reclaims []time.Duration          // from a wrapper's SIGKILL to its name wrapped again
	stalls   []string                 // what drain waited for in vain

	mu   sync.Mutex
	sent []chaosSend
}

func (cr *chaosRun) since() time.Duration { return time.Since(cr.start) }

func (cr *chaosRun) logf(format string, args ...any) {
	line := fmt.Sprintf("%7.1fs ", cr.since().Seconds()) + fmt.Sprintf(format, args...)
	cr.journal = append(cr.journal, line)
	cr.t.Log(line)
}

// randDuration is a duration in [lo, hi) from the driver's random source.
func (cr *chaosRun) randDuration(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(cr.rng.Int64N(int64(hi-lo)))
}

// stopTime is how long a process stays stopped: a third of the time
// longer than the hub's 10 s ack wait (the hub hands its messages out
// again), else a short stall.
func (cr *chaosRun) stopTime(cfg chaosConfig) time.Duration {
	if cr.rng.IntN(3) == 0 {
		return cr.randDuration(bus.DefaultAckWait+500*time.Millisecond, max(cfg.maxStop, bus.DefaultAckWait+time.Second))
	}
	return cr.randDuration(500*time.Millisecond, 4*time.Second)
}

// gotFile is where name's shell writes each line it reads, across its
// restarts.
func (cr *chaosRun) gotFile(name string) string { return filepath.Join(cr.dir, name+".got") }

// relay runs a relay command in the hub's home, within d, without failing
// the test (senders call it from their goroutines).
func (cr *chaosRun) relay(d time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, relayBin, args...)
	cmd.Env = cr.hp.env
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v: %w", d, ctx.Err())
	}
	return out.String(), err
}

// agents returns the hub's presence list.
func (cr *chaosRun) agents() ([]bus.Presence, error) {
	out, err := cr.relay(30*time.Second, "agents", "--json")
	if err != nil {
		return nil, fmt.Errorf("relay agents: %w: %s", err, out)
	}
	var list []bus.Presence
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "{") {
			var p bus.Presence
			if err := json.Unmarshal([]byte(l), &p); err != nil {
				return nil, fmt.Errorf("relay agents --json: %w: %s", err, l)
			}
			list = append(list, p)
		}
	}
	return list, nil
}

// errRefused is a wrap refused because the hub counts the name as taken.
var errRefused = errors.New("name refused as taken")

// startAgent wraps a reading shell as name and waits until the hub lists
// it with the new wrapper's pid. A wrap refused because the name is still
// taken (by the wrapper killed just before) is tried again: counted and
// timed, not failed.
func (cr *chaosRun) startAgent(name string) {
	cr.t.Helper()
	began := time.Now()
	deadline := began.Add(60 * time.Second)
	for {
		term := ptytest.Start(cr.t, ptytest.Options{Env: cr.hp.env, Cols: 100, Rows: 30},
			relayBin, "wrap", "--name", name, "--", "sh", "-c", readerScript, "reader", cr.gotFile(name))
		err := cr.waitUp(name, term, deadline)
		if err == nil {
			cr.terms[name] = term
			return
		}
		if !errors.Is(err, errRefused) {
			cr.t.Fatalf("wrap %s again: %v", name, err)
		}
		cr.refused++
		time.Sleep(200 * time.Millisecond) // the next try: a poll of the name
	}
}

// waitUp waits until the hub lists name with term's pid, or term exits.
func (cr *chaosRun) waitUp(name string, term *ptytest.Term, deadline time.Time) error {
	for {
		if term.Exited() {
			out := string(term.Output())
			if strings.Contains(out, "taken") && time.Now().Before(deadline) {
				return errRefused
			}
			return fmt.Errorf("the wrapper exited: %q", lastBytes(out, 600))
		}
		list, err := cr.agents()
		if err == nil {
			for _, p := range list {
				if p.Name == name && p.PID == term.Pid() && p.State != bus.StateOffline {
					return nil
				}
			}
			err = fmt.Errorf("%s (pid %d) not listed live: %+v", name, term.Pid(), list)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not up in time: %v; its terminal: %q", err, lastBytes(string(term.Output()), 600))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func lastBytes(s string, n int) string { return s[max(0, len(s)-n):] }

// act runs one chaos action and returns when the team is whole again.
func (cr *chaosRun) act(act string, cfg chaosConfig) {
	cr.t.Helper()
	cr.acts[act]++
	name := cr.names[cr.rng.IntN(len(cr.names))]
	switch act {
	case actKillWrapper, actKillStopped, actTermWrapper:
		if act == actKillStopped || cr.rng.IntN(4) > 0 {
			name = cr.unlucky
		}
		how, sig := "kill -9", syscall.SIGKILL
		if act == actTermWrapper {
			how, sig = "kill -TERM", syscall.SIGTERM
		}
		if act == actKillStopped {
			d := cr.randDuration(500*time.Millisecond, 4*time.Second)
			how = fmt.Sprintf("kill -STOP, %v later kill -9,", d.Round(time.Millisecond))
			cr.terms[name].Signal(syscall.SIGSTOP)
			time.Sleep(d) // the stall is the chaos
		}
		killed := time.Now()
		refused := cr.refused
		cr.terms[name].Signal(sig)
		cr.terms[name].Wait(30 * time.Second)
		cr.startAgent(name)
		cr.reclaims = append(cr.reclaims, time.Since(killed))
		cr.logf("%s %s's wrapper; wrapped again after %v (%d refusals as taken)", how, name, time.Since(killed).Round(time.Millisecond), cr.refused-refused)
	case actStopWrapper:
		d := cr.stopTime(cfg)
		cr.logf("kill -STOP %s's wrapper for %v", name, d.Round(time.Millisecond))
		cr.terms[name].Signal(syscall.SIGSTOP)
		time.Sleep(d) // the stall is the chaos
		cr.terms[name].Signal(syscall.SIGCONT)
	case actHubRestart:
		began := time.Now()
		if out, err := cr.relay(60*time.Second, "down"); err != nil {
			cr.t.Fatalf("relay down: %v\n%s", err, out)
		}
		cr.hp.up()
		cr.logf("relay down, relay up: the hub is back after %v", time.Since(began).Round(time.Millisecond))
	case actHubKill:
		began := time.Now()
		pid := cr.hp.pid()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			cr.t.Fatalf("kill -9 the hub (pid %d): %v", pid, err)
		}
		waitGone(cr.t, pid)
		cr.hp.up()
		cr.logf("kill -9 the hub (pid %d), relay up: back after %v", pid, time.Since(began).Round(time.Millisecond))
	case actHubStop:
		pid := cr.hp.pid()
		d := cr.stopTime(cfg)
		cr.logf("kill -STOP the hub (pid %d) for %v", pid, d.Round(time.Millisecond))
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			cr.t.Fatalf("kill -STOP the hub: %v", err)
		}
		time.Sleep(d) // the stall is the chaos
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			cr.t.Fatalf("kill -CONT the hub: %v", err)
		}
	}
}

// waitGone waits until process pid has ended (gone, or a zombie nobody
// has reaped yet).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if _, rest, ok := strings.Cut(string(b), ") "); ok && strings.HasPrefix(rest, "Z") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still there 30 s after kill -9", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sender sends from's numbered messages, each to another agent picked at
// random, one relay send after the other, until ctx is done. A send that
// fails is recorded with its error and not repeated (its message may have
// been stored all the same: sent again, it would be a second message).
func (cr *chaosRun) sender(ctx context.Context, from string, rng *rand.Rand, pace time.Duration) {
	for seq := 1; ctx.Err() == nil; seq++ {
		to := cr.names[rng.IntN(len(cr.names))]
		for to == from {
			to = cr.names[rng.IntN(len(cr.names))]
		}
		s := chaosSend{key: chaosKey{from: from, to: to, seq: seq}, at: cr.since()}
		out, err := cr.relay(60*time.Second, "send", "--json", "--from", from, to, chaosBody(s.key))
		var e bus.Envelope
		switch {
		case err != nil:
			s.err = fmt.Sprintf("%v: %s", err, strings.TrimSpace(lastBytes(out, 300)))
		case json.Unmarshal([]byte(out[max(0, strings.Index(out, "{")):]), &e) != nil || e.ID == "":
			s.err = fmt.Sprintf("relay send printed no envelope: %q", out)
		default:
			s.id = e.ID
		}
		cr.mu.Lock()
		cr.sent = append(cr.sent, s)
		cr.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(pace):
		}
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// Delivery at the speed of the bus (issue 22): behaviour, not timing; the
// timing is `make bench` (internal/tools/bench/latency).

// paceShell wraps an interactive bash as name with --delivery mode (the
// default when empty), damping lifted so that a burst is not held.
func (tm *team) paceShell(name, mode string) *ptytest.Term {
	tm.t.Helper()
	xdg := tm.t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "relay"), 0o700); err != nil {
		tm.t.Fatal(err)
	}
	cfg := "[damping]\npair_max = 100000\nagent_max = 100000\n"
	if err := os.WriteFile(filepath.Join(xdg, "relay", "config.toml"), []byte(cfg), 0o600); err != nil {
		tm.t.Fatal(err)
	}
	args := []string{relayBin, "wrap", "--name", name}
	if mode != "" {
		args = append(args, "--delivery", mode)
	}
	args = append(args, "--", "bash", "--norc", "--noprofile")
	env := append(append([]string(nil), tm.env...), "XDG_CONFIG_HOME="+xdg)
	// 50 rows: a burst of 20 (two rows each) fits on the screen, as an
	// injection into a shell must (session's pasteFits).
	return ptytest.Start(tm.t, ptytest.Options{Env: env, Cols: 100, Rows: 50}, args...)
}

var typedRE = regexp.MustCompile(`msg=typed .*?items=(\d+) ids=(\S*)`)

// injections returns the ids of each injection typed into name, in order,
// from its wrapper's log.
func (tm *team) injections(name string) [][]string {
	data, _ := os.ReadFile(filepath.Join(lookupEnv(tm.env, "RELAY_HOME"), "logs", "wrap-"+name+".log"))
	var out [][]string
	for _, m := range typedRE.FindAllStringSubmatch(string(data), -1) {
		var ids []string
		if m[2] != "" && m[2] != `""` {
			// The wrapper keys what it types by sender and id (FROM/ID).
			for _, key := range strings.Split(m[2], ",") {
				ids = append(ids, key[strings.LastIndexByte(key, '/')+1:])
			}
		}
		out = append(out, ids)
	}
	return out
}

// sendAll sends bodies to "to" from a bus client and returns their ids.
func sendAll(t *testing.T, c *bus.Client, to string, bodies []string) []string {
	t.Helper()
	var ids []string
	for _, b := range bodies {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		env, err := c.Send(ctx, to, b)
		cancel()
		if err != nil {
			t.Fatalf("send %s: %v", b, err)
		}
		ids = append(ids, env.ID)
	}
	return ids
}

// typedOnce checks that every id of ids was typed exactly once, in order,
// and returns the injections that held them.
func typedOnce(injs [][]string, ids []string) (held [][]string, err error) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var order []string
	for _, inj := range injs {
		var mine []string
		for _, id := range inj {
			if want[id] {
				mine = append(mine, id)
			}
		}
		if len(mine) > 0 {
			held = append(held, mine)
			order = append(order, mine...)
		}
	}
	if fmt.Sprint(order) != fmt.Sprint(ids) {
		return held, fmt.Errorf("typed %d ids %v, want each of %d once, in order %v", len(order), order, len(ids), ids)
	}
	return held, nil
}

// bodies returns n message bodies tagged with tag.
func bodies(tag string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", tag, i)
	}
	return out
}

// holdWithDraft gives sh an unfinished line of the human's (delivery waits)
// and returns a func that clears it (Ctrl-U): what came meanwhile goes in
// at the idle moment that follows.
func holdWithDraft(tm *team, name string, sh *ptytest.Term) (release func()) {
	tm.t.Helper()
	tm.waitState(name, bus.StateIdle)
	sh.Type("echo unfinished")
	// The shell's echo of the keys: the wrapper has seen them (it notes
	// the human's keys before it passes them on).
	sh.WaitOutput("echo unfinished", 10*time.Second)
	return func() { sh.Type("\x15") }
}

// TestPaceBurstOneInjection: 20 messages that wait for a shell (the human
// had an unfinished line) go in as one injection when it is idle, in
// order, with every id, each once.
func TestPaceBurstOneInjection(t *testing.T) {
	tm := newTeam(t)
	bob := tm.paceShell("Bob", "")
	tm.waitAgents("Bob")
	release := holdWithDraft(tm, "Bob", bob)
	bs := bodies("burst", 20)
	ids := sendAll(t, tm.sender("human"), "Bob", bs)
	release()
	var held [][]string
	testutil.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var err error
		held, err = typedOnce(tm.injections("Bob"), ids)
		return err
	})
	if len(held) != 1 {
		t.Errorf("the burst went in as %d injections %v, want one", len(held), held)
	}
	for _, b := range bs {
		bob.WaitOutput(b, 5*time.Second)
	}
	out := string(bob.Output())
	last := -1
	for _, b := range bs {
		i := strings.Index(out, b)
		if i < last {
			t.Errorf("%s shows before the message sent ahead of it", b)
		}
		last = i
	}
}

// TestPaceBurstOverCap: a burst longer than one injection may be (a
// shell's line limit) is split across idle moments: every message goes in
// once, in order, nothing lost.
func TestPaceBurstOverCap(t *testing.T) {
	tm := newTeam(t)
	bob := tm.paceShell("Bob", "")
	tm.waitAgents("Bob")
	release := holdWithDraft(tm, "Bob", bob)
	filler := strings.Repeat("x", 300)
	var bs []string
	for _, b := range bodies("big", 40) {
		bs = append(bs, b+" "+filler)
	}
	ids := sendAll(t, tm.sender("human"), "Bob", bs)
	release()
	var held [][]string
	testutil.WaitFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		var err error
		held, err = typedOnce(tm.injections("Bob"), ids)
		return err
	})
	// 40 lines of ~400 bytes are ~16 KB: at least four injections of at
	// most 4,000 bytes.
	if len(held) < 4 {
		t.Errorf("%d injections %v, want the burst split (at least 4)", len(held), held)
	}
	for _, b := range bodies("big", 40) {
		bob.WaitOutput(b+" ", 10*time.Second)
	}
}

// TestPaceWaitModeOneAtATime: in wait (one-per-turn) mode, a burst goes in
// one message per injection, in order.
func TestPaceWaitModeOneAtATime(t *testing.T) {
	tm := newTeam(t)
	bob := tm.paceShell("Bob", "wait")
	tm.waitAgents("Bob")
	release := holdWithDraft(tm, "Bob", bob)
	ids := sendAll(t, tm.sender("human"), "Bob", bodies("one", 5))
	release()
	var held [][]string
	testutil.WaitFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		var err error
		held, err = typedOnce(tm.injections("Bob"), ids)
		return err
	})
	for _, inj := range held {
		if len(inj) != 1 {
			t.Errorf("an injection held %v; want one message each", inj)
		}
	}
}

// TestPaceExchangeEveryMode: 50 messages each way between two wrapped
// shells, in every delivery mode: each arrives once, with its receipt.
func TestPaceExchangeEveryMode(t *testing.T) {
	for _, mode := range []string{"batch", "wait", "queue", "steer"} {
		t.Run(mode, func(t *testing.T) {
			tm := newTeam(t)
			a, b := "A"+mode, "B"+mode
			sa, sb := tm.paceShell(a, mode), tm.paceShell(b, mode)
			tm.waitAgents(a, b)
			tm.waitState(a, bus.StateIdle)
			tm.waitState(b, bus.StateIdle)
			const n = 50
			loop := func(to, tag string) string {
				return fmt.Sprintf("for i in $(seq 10 %d); do echo \"@relay:%s %s-$i\"; done\r", 9+n, to, tag)
			}
			sa.Type(loop(b, "ab-"+mode))
			sb.Type(loop(a, "ba-"+mode))
			want := func(tag string) []string {
				var out []string
				for i := 10; i < 10+n; i++ {
					out = append(out, fmt.Sprintf("%s-%d", tag, i))
				}
				return out
			}
			ab, ba := want("ab-"+mode), want("ba-"+mode)
			testutil.WaitFor(t, 90*time.Second, 100*time.Millisecond, func() error {
				log, err := tm.relay("log", "--json")
				if err != nil {
					return err
				}
				missing := 0
				for _, body := range append(append([]string(nil), ab...), ba...) {
					ok := false
					for _, l := range strings.Split(log, "\n") {
						if strings.Contains(l, `"`+body+`"`) && (strings.Contains(l, `"delivered"`) || strings.Contains(l, `"seen"`)) {
							ok = true
							break
						}
					}
					if !ok {
						missing++
					}
				}
				if missing > 0 {
					return fmt.Errorf("%d of %d messages without a delivered receipt", missing, 2*n)
				}
				return nil
			})
			// Each typed once: the receivers' logs name every id once.
			for _, side := range []struct {
				name   string
				term   *ptytest.Term
				bodies []string
			}{{b, sb, ab}, {a, sa, ba}} {
				var typed []string
				for _, inj := range tm.injections(side.name) {
					typed = append(typed, inj...)
				}
				seen := map[string]int{}
				for _, id := range typed {
					seen[id]++
				}
				for id, k := range seen {
					if k != 1 {
						t.Errorf("%s: message %s typed %d times", side.name, id, k)
					}
				}
				if len(seen) < n {
					t.Errorf("%s: %d messages typed, want %d", side.name, len(seen), n)
				}
				for _, body := range side.bodies {
					side.term.WaitOutput(body, 10*time.Second)
				}
			}
		})
	}
}

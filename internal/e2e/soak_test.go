package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/testing/ptytest"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// soakSizes are the body sizes that must arrive whole, whatever buffer
// boundary they cross. The last is bus.MaxBody: it is longer than what is
// typed into an agent, so the agent reads the first part and how to get the
// rest (relay log --id), and the log holds it whole.
var soakSizes = []int{1, 1 << 10, 4 << 10, 64 << 10}

// TestSoak: two wrapped shell agents, Alice (wait delivery) and Bob (queue
// delivery), exchange soakPerSide messages each way while the hub is
// restarted and Bob's wrapper is killed with SIGKILL and started again.
// Every message arrives exactly once and in order per sender; Alice's
// bodies of 1 B, 1 KiB and 4 KiB (written on her screen) and 64 KiB (sent
// with relay send from her shell) arrive whole. soakPerSide is small in
// `make test` and large with the build tag soak (`make soak`).
func TestSoak(t *testing.T) {
	home := t.TempDir()
	h := hubtest.StartAt(t, home, "127.0.0.1:0")
	dir := t.TempDir()
	tm := &team{t: t, hub: h, env: append(baseEnv(t),
		"RELAY_HOME="+filepath.Join(dir, "home"), "RELAY_HUB="+h.URL(), "RELAY_TOKEN="+h.Token(),
		"TERM=xterm-256color", "RELAY_BIN="+relayBin)}

	// Alice's sized bodies: on her screen as @relay: paragraphs, except the
	// longest, which a shell sends with relay send (the screen reader caps
	// a body at 16 KiB).
	bodies := make([]string, len(soakSizes))
	var screen strings.Builder
	for i, n := range soakSizes {
		bodies[i] = sizedBody(n)
		f := filepath.Join(dir, fmt.Sprintf("body-%d", n))
		if err := os.WriteFile(f, []byte(bodies[i]), 0o600); err != nil {
			t.Fatal(err)
		}
		if n <= 4<<10 {
			fmt.Fprintf(&screen, `printf '@relay:Bob %%s\n\n' "$(cat %s)"; `, f)
		} else {
			fmt.Fprintf(&screen, `"$RELAY_BIN" send --from "$RELAY_NAME" Bob - < %s > /dev/null || echo send failed; `, f)
		}
	}
	recA, recB := filepath.Join(dir, "alice.rec"), filepath.Join(dir, "bob.rec")
	start := func(name, mode, rec, first string) *ptytest.Term {
		// Non-canonical input: a shell's read in canonical mode cuts lines
		// at 4,095 bytes, and relay types each message as one line.
		script := "stty -icanon; " + first + `while IFS= read -r line; do printf '%s\n' "$line" >> ` + rec + `; done`
		return ptytest.Start(t, ptytest.Options{Env: tm.env, Cols: 100, Rows: 30},
			relayBin, "wrap", "--name", name, "--delivery", mode, "--", "sh", "-c", script)
	}
	bob := start("Bob", "queue", recB, "")
	tm.waitAgents("Bob")
	alice := start("Alice", "wait", recA, screen.String())
	tm.waitAgents("Alice", "Bob")
	// The sized bodies first: relay send in Alice's shell needs the hub up.
	testutil.WaitFor(t, time.Minute, 100*time.Millisecond, func() error {
		got, err := messages(recB)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		if len(got) < len(soakSizes) {
			return fmt.Errorf("Bob has %d of Alice's %d sized messages; Alice's screen:\n%s",
				len(got), len(soakSizes), ptytest.Screen(t, alice.Output(), 100, 30))
		}
		return nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	client := func(name string) *bus.Client {
		c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// The bulk: Alice's and Bob's names, as `relay send --from` in their
	// shells would send them, with fixed ids so that a retry after an error
	// keeps one copy.
	ca, cb := client("Alice"), client("Bob")
	send := func(c *bus.Client, from, to string, i int) {
		t.Helper()
		sctx, scancel := context.WithTimeout(ctx, time.Minute)
		defer scancel()
		m := bus.Message{ID: fmt.Sprintf("soak-%s-%d", from, i), To: to, Body: bulkBody(from, i)}
		if _, err := c.SendMessage(sctx, m); err != nil {
			t.Fatalf("send %s → %s #%d: %v", from, to, i, err)
		}
	}
	// At most soakWindow messages each way wait to be typed: the traffic,
	// the hub restart and the kill are spread over the whole run.
	const soakWindow = 50
	for i := 1; i <= soakPerSide; i++ {
		if i > soakWindow {
			testutil.WaitFor(t, 5*time.Minute, 100*time.Millisecond, func() error {
				if err := complete(recB, "Alice", i-soakWindow); err != nil {
					return err
				}
				return complete(recA, "Bob", i-soakWindow)
			})
		}
		send(ca, "Alice", "Bob", i)
		send(cb, "Bob", "Alice", i)
		switch i {
		case soakPerSide / 3:
			t.Logf("restarting the hub after %d messages each way", i)
			h.Shutdown()
			h = hubtest.StartAt(t, home, "")
		case 2 * soakPerSide / 3:
			t.Logf("killing Bob's wrapper after %d messages each way", i)
			bob.Signal(syscall.SIGKILL)
			bob.Wait(10 * time.Second)
			waitStale(t, ca, "Bob")
			bob = start("Bob", "queue", recB, "")
		}
	}

	// Everything arrives; then nothing is pending, so no copy can follow.
	testutil.WaitFor(t, 5*time.Minute, 100*time.Millisecond, func() error {
		if err := complete(recB, "Alice", soakPerSide); err != nil {
			return err
		}
		return complete(recA, "Bob", soakPerSide)
	})
	testutil.WaitFor(t, time.Minute, 100*time.Millisecond, func() error {
		list, err := ca.Agents(ctx)
		if err != nil {
			return err
		}
		for _, a := range list {
			if a.Pending > 0 {
				return fmt.Errorf("%s has %d pending", a.Name, a.Pending)
			}
		}
		return nil
	})
	// Bob's first session journaled what it typed before the kill; the
	// one injection whose Enter his shell read in the instant before its
	// journal mark may be typed again (docs/architecture.md), nothing else.
	bobLog, _ := os.ReadFile(filepath.Join(dir, "home", "logs", "wrap-Bob.log"))
	var disorder []string
	for _, c := range []struct{ rec, from string }{{recB, "Alice"}, {recA, "Bob"}} {
		seq, err := received(c.rec, c.from)
		if err != nil {
			t.Fatal(err)
		}
		dups, late, distinct := tally(seq)
		if c.rec == recB && len(dups) > 0 {
			all := dups
			if dups = unexcused(dups, journaledBeforeKill(bobLog, c.from)); dups == nil {
				t.Logf("read twice, typed while Bob's wrapper was killed: %v", all)
			}
		}
		if len(dups) > 0 || distinct != soakPerSide {
			t.Errorf("messages from %s: %d distinct of %d, read twice: %v", c.from, distinct, soakPerSide, dups)
		}
		if len(late) > 0 {
			disorder = append(disorder, fmt.Sprintf("from %s, read late: %v (the first right after #%d)", c.from, late, before(seq, late[0])))
		}
	}
	checkSized(t, tm, recB, bodies)
	if t.Failed() {
		t.Logf("Alice's terminal:\n%.3000q", alice.Output())
		log, _ := os.ReadFile(filepath.Join(dir, "home", "logs", "wrap-Bob.log"))
		t.Logf("Bob's log (both sessions):\n%s", log)
	}
	if disorder != nil {
		// Messages handed to a wrapper that is then killed must come back
		// before the ones sent after them (the inbox resumes in order).
		t.Errorf("out of order after the wrapper was killed: %s", strings.Join(disorder, "; "))
	}
}

// sizedBody is a body of exactly n bytes without spaces (so that a cap
// cannot cut it at a word), which says its own size.
func sizedBody(n int) string {
	if n < 8 {
		return strings.Repeat("Z", n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "S%d:", n)
	for b.Len() < n {
		b.WriteString(strconv.Itoa(b.Len() % 10))
	}
	return b.String()[:n]
}

func bulkBody(from string, i int) string { return fmt.Sprintf("bulk %s-%d end", from, i) }

var bulkRE = regexp.MustCompile(`bulk (\w+)-(\d+) end`)

// received returns the numbers of from's bulk messages in rec, in the
// order the agent read them.
func received(rec, from string) ([]int, error) {
	b, err := os.ReadFile(rec)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var seq []int
	for _, m := range bulkRE.FindAllStringSubmatch(string(b), -1) {
		if m[1] == from {
			n, _ := strconv.Atoi(m[2])
			seq = append(seq, n)
		}
	}
	return seq, nil
}

// complete reports whether every one of from's n messages is in rec.
func complete(rec, from string, n int) error {
	seq, err := received(rec, from)
	if err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, s := range seq {
		seen[s] = true
	}
	for i := 1; i <= n; i++ {
		if !seen[i] {
			return fmt.Errorf("%d of %d from %s in, first missing: #%d", len(seen), n, from, i)
		}
	}
	return nil
}

// tally reads a sequence of message numbers: those read twice, those read
// after a higher number (late), and how many distinct numbers there are.
func tally(seq []int) (dups, late []int, distinct int) {
	count := map[int]int{}
	last := 0
	for _, s := range seq {
		count[s]++
		switch {
		case count[s] == 2:
			dups = append(dups, s)
		case count[s] == 1 && s < last:
			late = append(late, s)
		}
		last = max(last, s)
	}
	return dups, late, len(count)
}

var typedLogRE = regexp.MustCompile(`(?m)msg=typed items=\d+ ids=(\S+)`)

// journaledBeforeKill returns the numbers of from's bulk messages that a
// wrapper's first session logged typed (it logs them once journaled),
// from its log holding that session and the next.
func journaledBeforeKill(log []byte, from string) map[int]bool {
	first := string(log)
	if _, rest, ok := strings.Cut(first, "child started"); ok {
		if i := strings.Index(rest, "child started"); i >= 0 {
			first = first[:len(first)-len(rest)+i]
		}
	}
	done := map[int]bool{}
	prefix := from + "/soak-" + from + "-"
	for _, m := range typedLogRE.FindAllStringSubmatch(first, -1) {
		for _, id := range strings.Split(m[1], ",") {
			if n, err := strconv.Atoi(strings.TrimPrefix(id, prefix)); err == nil && strings.HasPrefix(id, prefix) {
				done[n] = true
			}
		}
	}
	return done
}

// unexcused returns the duplicates that the kill does not explain: all of
// them unless they are consecutive numbers, right after the last one the
// first session journaled, none of them journaled (the injection in flight
// at the kill, read by the shell before its mark).
func unexcused(dups []int, journaled map[int]bool) []int {
	last := 0
	for n := range journaled {
		last = max(last, n)
	}
	for i, n := range dups {
		if journaled[n] || n != last+1+i {
			return dups
		}
	}
	return nil
}

// before returns the number read just before the first reading of n.
func before(seq []int, n int) int {
	for i, s := range seq {
		if s == n && i > 0 {
			return seq[i-1]
		}
	}
	return 0
}

// waitStale waits until the hub no longer counts name's (killed) wrapper
// as live, so that a new one may claim the name.
func waitStale(t *testing.T, c *bus.Client, name string) {
	t.Helper()
	testutil.WaitFor(t, 45*time.Second, 100*time.Millisecond, func() error {
		list, err := c.Agents(context.Background())
		if err != nil {
			return err
		}
		for _, a := range list {
			// Three missed heartbeats (a wrapper's: 10 s each) free a claim.
			if a.Name == name && a.State != bus.StateOffline && time.Since(a.Seen) < 31*time.Second {
				return fmt.Errorf("%s still live (seen %v ago)", name, time.Since(a.Seen).Round(time.Millisecond))
			}
		}
		return nil
	})
}

var (
	logIDRE = regexp.MustCompile(`relay log --id (\S+?)\]`)
)

// typed is one message as a shell agent read it.
type typed struct{ from, id, body string }

// messages splits what a shell agent read into the messages typed into it:
// one per line, or several on one line when queue mode coalesced them.
func messages(rec string) ([]typed, error) {
	b, err := os.ReadFile(rec)
	if err != nil {
		return nil, err
	}
	var out []typed
	for _, line := range strings.Split(string(b), "\n") {
		ms := messageRE.FindAllStringSubmatchIndex(line, -1)
		for i, m := range ms {
			end := len(line)
			if i+1 < len(ms) {
				end = ms[i+1][0]
			}
			out = append(out, typed{from: line[m[2]:m[3]], id: line[m[4]:m[5]], body: shellText(line[m[1]:end])})
		}
	}
	return out, nil
}

// checkSized checks that each sized body reached Bob whole, or, past the
// typing cap, its first part and a pointer to the log, which holds it whole.
func checkSized(t *testing.T, tm *team, rec string, bodies []string) {
	t.Helper()
	got, err := messages(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range bodies {
		prefix := body[:min(len(body), 64)]
		var m *typed
		for i := range got {
			if got[i].from == "Alice" && strings.HasPrefix(got[i].body, prefix) {
				m = &got[i]
			}
		}
		if m == nil {
			t.Errorf("the %d-byte body never reached Bob", len(body))
			continue
		}
		// Into a shell relay types a body of up to ~3.5 KiB whole (one
		// terminal line holds 4095 bytes); a longer one follows the cap rule.
		if len(body) <= 3<<10 {
			if m.body != body {
				t.Errorf("the %d-byte body reached Bob as %d bytes, ending %q", len(body), len(m.body), m.body[max(0, len(m.body)-80):])
			}
			continue
		}
		if !strings.HasPrefix(m.body, body[:1024]) || !logIDRE.MatchString(m.body) {
			t.Errorf("the %d-byte body reached Bob without its first part and the way to read the rest: %q", len(body), m.body[max(0, len(m.body)-200):])
			continue
		}
		out, err := tm.relay("log", "--json", "--id", m.id)
		if err != nil {
			t.Errorf("relay log --id %s: %v: %s", m.id, err, out)
			continue
		}
		var e struct{ Body string }
		if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &e); err != nil {
			t.Errorf("relay log --json: %v: %.200s", err, out)
			continue
		}
		if e.Body != body {
			t.Errorf("relay log holds a %d-byte body for the %d-byte message", len(e.Body), len(body))
		}
	}
}

// TestSoakScreenBurst: one wrapped shell (loop damping lifted in its
// configuration) writes soakBurst @relay: paragraphs in one go; every one
// reaches the other agent, once and in order.
func TestSoakScreenBurst(t *testing.T) {
	const soakBurst = 300
	h := hubtest.Start(t)
	dir := t.TempDir()
	xdg := filepath.Join(dir, "xdg")
	if err := os.MkdirAll(filepath.Join(xdg, "relay"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := "[damping]\npair_max = 1000000\nagent_max = 1000000\n"
	if err := os.WriteFile(filepath.Join(xdg, "relay", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	tm := &team{t: t, hub: h, env: append(baseEnv(t),
		"RELAY_HOME="+home, "RELAY_HUB="+h.URL(), "RELAY_TOKEN="+h.Token(),
		"TERM=xterm-256color", "XDG_CONFIG_HOME="+xdg)}
	rec := filepath.Join(dir, "bob.rec")
	ptytest.Start(t, ptytest.Options{Env: tm.env, Cols: 100, Rows: 30}, relayBin, "wrap", "--name", "Bob", "--delivery", "queue", "--",
		"sh", "-c", `stty -icanon; while IFS= read -r line; do printf '%s\n' "$line" >> `+rec+`; done`)
	tm.waitAgents("Bob")
	ptytest.Start(t, ptytest.Options{Env: tm.env, Cols: 100, Rows: 30}, relayBin, "wrap", "--name", "Alice", "--",
		"sh", "-c", fmt.Sprintf(`i=1; while [ $i -le %d ]; do printf '@relay:Bob bulk Alice-%%d end\n\n' $i; i=$((i+1)); done; exec cat > /dev/null`, soakBurst))
	dropped := func() int {
		log, _ := os.ReadFile(filepath.Join(home, "logs", "wrap-Alice.log"))
		return strings.Count(string(log), "command dropped")
	}
	// Wait until every message arrived or is accounted for as dropped.
	testutil.WaitFor(t, time.Minute, 100*time.Millisecond, func() error {
		seq, err := received(rec, "Alice")
		if err != nil {
			return err
		}
		_, _, distinct := tally(seq)
		if n := dropped(); distinct+n < soakBurst {
			return fmt.Errorf("%d of %d arrived, %d dropped", distinct, soakBurst, n)
		}
		return nil
	})
	seq, err := received(rec, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	dups, late, distinct := tally(seq)
	if distinct < soakBurst {
		if n := dropped(); n > 0 {
			t.Errorf("%d of %d @relay: commands dropped (%q in wrap-Alice.log); %d arrived",
				n, soakBurst, "command dropped: handlers are behind", distinct)
		}
		t.Errorf("%d of %d arrived", distinct, soakBurst)
	}
	if len(dups) > 0 || len(late) > 0 {
		t.Errorf("read twice: %v; read late: %v", dups, late)
	}
}

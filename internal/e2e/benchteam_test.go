package e2e

// The bench team: what the Claude Code benchmarks (claude_bench_test.go)
// and the CLI round trips share.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/hub/hubtest"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// benchTeam is team for benchmarks: the same hub, memory service and
// environment, but for a testing.TB (team's helpers take a *testing.T). It
// also watches the hub: presence, the log and every receipt.
type benchTeam struct {
	tb  testing.TB
	hub *hub.Hub
	env []string
	bus *bus.Client

	mu       sync.Mutex
	receipts map[string][]bus.Receipt // by message id, in arrival order
}

func newBenchTeam(tb testing.TB) *benchTeam {
	tb.Helper()
	return newBenchTeamOf(tb, "claude")
}

// newBenchTeamOf is newBenchTeam for benchmarks of the CLI cli: they skip
// when it is not installed.
func newBenchTeamOf(tb testing.TB, cli string) *benchTeam {
	tb.Helper()
	agenttest.Binary(tb, cli) // skip before starting anything
	h := hubtest.Start(tb)
	serveMemoryTB(tb, h)
	home := filepath.Join(tb.TempDir(), "home")
	bt := &benchTeam{tb: tb, hub: h, receipts: map[string][]bus.Receipt{}, env: append(baseEnv(tb),
		"RELAY_HOME="+home, "RELAY_HUB="+h.URL(), "RELAY_TOKEN="+h.Token(), "TERM=xterm-256color")}
	ctx := context.Background()
	c, err := bus.Connect(ctx, bus.Options{URL: h.URL(), Token: h.Token(), Name: "bench"})
	if err != nil {
		tb.Fatalf("connect to the hub: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	bt.bus = c
	nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
	if err != nil {
		tb.Fatalf("connect to the hub: %v", err)
	}
	tb.Cleanup(nc.Close)
	sub, err := nc.Subscribe(bus.ReceiptSubject(bus.DefaultWorkspace, "*"), func(m *nats.Msg) {
		var r bus.Receipt
		if json.Unmarshal(m.Data, &r) == nil {
			bt.mu.Lock()
			bt.receipts[r.ID] = append(bt.receipts[r.ID], r)
			bt.mu.Unlock()
		}
	})
	if err != nil {
		tb.Fatalf("watch receipts: %v", err)
	}
	tb.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	return bt
}

// serveMemoryTB is serveMemory for a testing.TB.
func serveMemoryTB(tb testing.TB, h *hub.Hub) {
	tb.Helper()
	st, err := memory.Open(filepath.Join(tb.TempDir(), "memory.db"), nil)
	if err != nil {
		tb.Fatal(err)
	}
	nc, err := nats.Connect(h.URL(), nats.Token(h.Token()))
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { memory.Serve(ctx, nc, memory.DefaultSubjectPrefix, st); close(done) }()
	tb.Cleanup(func() { cancel(); <-done; nc.Close(); st.Close() })
}

// claude starts the real Claude Code as name under relay wrap, with the
// given delivery mode ("" for the default), its model answering with
// script. It is team.claude plus the mode.
func (bt *benchTeam) claude(name string, mode delivery.Mode, script mockmodel.Script) *claudeAgent {
	bt.tb.Helper()
	model := mockmodel.NewAnthropic(mockmodel.Options{Script: script})
	bt.tb.Cleanup(model.Close)
	env := relayVars(bt.env)
	wrap := []string{relayBin, "wrap"}
	if mode != "" {
		wrap = append(wrap, "--delivery", string(mode))
	}
	wrap = append(wrap, "--name", name, "--")
	cmd := agenttest.Claude(bt.tb, agenttest.ClaudeOptions{Model: model.URL, Cols: 100, Rows: 30, Env: env}).Under(wrap...)
	term := agenttest.Start(bt.tb, cmd)
	bt.tb.Cleanup(func() {
		_ = syscallKill(term.Pid())
		select {
		case <-term.Done():
		case <-time.After(15 * time.Second):
		}
	})
	if _, err := term.WaitReady(60*time.Second, agenttest.ClaudeReady); err != nil {
		bt.tb.Fatalf("%s: Claude Code did not get ready under relay wrap: %v", name, err)
	}
	a := &claudeAgent{name: name, model: model, term: term}
	bt.waitIdle(a.name, time.Time{})
	return a
}

// relay runs a relay command against the team's hub.
func (bt *benchTeam) relay(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, relayBin, args...)
	cmd.Env = bt.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// send sends body from Alice to Bob with relay send and returns the stored
// envelope.
func (bt *benchTeam) send(body string) bus.Envelope {
	bt.tb.Helper()
	out, err := bt.relay("send", "--json", "--from", "Alice", "Bob", body)
	if err != nil {
		bt.tb.Fatalf("relay send: %v: %s", err, out)
	}
	var env bus.Envelope
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		bt.tb.Fatalf("relay send --json printed %q: %v", out, err)
	}
	return env
}

// waitIdle waits until name's wrapper reports it idle, in a state that
// began after since.
func (bt *benchTeam) waitIdle(name string, since time.Time) {
	bt.tb.Helper()
	bt.waitPresence(name, "idle after "+since.Format(time.StampMilli), func(p bus.Presence) bool {
		return p.State == bus.StateIdle && p.Since.After(since)
	})
}

// waitPresence waits until ok holds for name's presence; what says what
// is awaited.
func (bt *benchTeam) waitPresence(name, what string, ok func(bus.Presence) bool) {
	bt.tb.Helper()
	testutil.WaitFor(bt.tb, 60*time.Second, 20*time.Millisecond, func() error {
		ps, err := bt.bus.Agents(context.Background())
		for _, p := range ps {
			if p.Name == name && ok(p) {
				return nil
			}
		}
		return fmt.Errorf("%s: not %s (%v): %+v", name, what, err, ps)
	})
}

// envelope returns the stored message whose body contains s.
func (bt *benchTeam) envelope(s string) (env bus.Envelope) {
	bt.tb.Helper()
	stop := errors.New("found")
	testutil.WaitFor(bt.tb, 30*time.Second, 50*time.Millisecond, func() error {
		err := bt.bus.Log(context.Background(), bus.LogOptions{}, func(e bus.Entry) error {
			if env = e.Envelope; strings.Contains(e.Body, s) {
				return stop
			}
			return nil
		})
		if err == stop {
			return nil
		}
		return fmt.Errorf("no message containing %q in the log (%v)", s, err)
	})
	return env
}

// receipt waits for the first receipt with status st for message id.
func (bt *benchTeam) receipt(id string, st bus.Status) (r bus.Receipt) {
	bt.tb.Helper()
	testutil.WaitFor(bt.tb, 30*time.Second, 20*time.Millisecond, func() error {
		bt.mu.Lock()
		defer bt.mu.Unlock()
		for _, r = range bt.receipts[id] {
			if r.Status == st {
				return nil
			}
		}
		return fmt.Errorf("no %s receipt for %s", st, id)
	})
	return r
}

// turn waits until a's model got a turn containing s.
func (bt *benchTeam) turn(a *claudeAgent, s string, timeout time.Duration) mockmodel.Request {
	bt.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := a.model.WaitForRequest(ctx, s)
	if err != nil {
		bt.tb.Fatalf("%s's model: %v\nscreen:\n%s", a.name, err, agenttest.TmuxScreen(bt.tb, a.term.Raw(), 100, 30))
	}
	return req
}

// replied waits until a's model finished answering turn n.
func (bt *benchTeam) replied(a *claudeAgent, n int) time.Time {
	bt.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := a.model.WaitReplied(ctx, n)
	if err != nil {
		bt.tb.Fatalf("%s's model, turn %d: %v", a.name, n, err)
	}
	return req.Replied
}

// settle is the pause relay makes between a paste and its Enter for Claude
// Code: typing starts that long before the delivered receipt.
func settle(tb testing.TB) time.Duration {
	p, err := registry.Named("claude")
	if err != nil {
		tb.Fatal(err)
	}
	return p.Settle
}

// samples is a set of durations, reported as percentiles in milliseconds.
type samples []time.Duration

func (s samples) pct(p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	d := slices.Clone(s)
	slices.Sort(d)
	i := int(p*float64(len(d))+0.999999) - 1
	return d[max(0, min(i, len(d)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// report reports s's p50 and max as name-p50-ms and name-max-ms.
func (s samples) report(b *testing.B, name string) {
	b.ReportMetric(ms(s.pct(0.5)), name+"-p50-ms")
	b.ReportMetric(ms(s.pct(1)), name+"-max-ms")
}

// token matches the markers the benchmarks put in messages.
var token = regexp.MustCompile(`\b[a-z]+-\d+-x\b`)

// aliceScript answers a prompt holding a marker with a message to Bob
// carrying it, and anything else with "OK.".
func aliceScript(r mockmodel.Request) mockmodel.Reply {
	if tok := token.FindString(r.LastUser); tok != "" {
		return mockmodel.Reply{Text: "I'll tell Bob.\n\n@relay:Bob " + tok + " the build on main is green again, please rebase your branch onto it."}
	}
	return mockmodel.Reply{Text: "OK."}
}

// idleSplit is one message from Alice's model to idle Bob's, in parts.
type idleSplit struct {
	total   time.Duration // Alice's turn answered → Bob's model request
	extract time.Duration // Alice's turn answered → message stored (Stop hook, extraction, publish)
	wait    time.Duration // stored → typing starts (inbox, wait for idle)
	typing  time.Duration // typing starts → Bob's model request (paste, settle, Enter, Claude Code)
	enter   time.Duration // Enter written → Bob's model request (Claude Code and its UserPromptSubmit hook)
}

// idleRound has Alice's Claude Code send Bob one message while Bob is
// idle, and splits the time it took to reach Bob's model.
func (bt *benchTeam) idleRound(alice, bob *claudeAgent, tok string) idleSplit {
	bt.tb.Helper()
	alice.term.Submit("please send " + tok)
	ask := bt.turn(alice, tok, 60*time.Second)
	aliceDone := bt.replied(alice, ask.Turn)
	got := bt.turn(bob, tok, 60*time.Second)
	env := bt.envelope(tok)
	typed := bt.receipt(env.ID, bus.StatusDelivered).Time
	start := typed.Add(-settle(bt.tb))
	if strings.Contains(got.LastUser, "Stop hook feedback") {
		bt.tb.Logf("%s reached Bob through his Stop hook, not typed: Bob was not idle", tok)
	}
	// Ready for the next round: both idle again after their turns.
	bobDone := bt.replied(bob, got.Turn)
	bt.waitIdle("Alice", aliceDone)
	bt.waitIdle("Bob", bobDone)
	return idleSplit{
		total:   got.Time.Sub(aliceDone),
		extract: env.Created.Sub(aliceDone),
		wait:    start.Sub(env.Created),
		typing:  got.Time.Sub(start),
		enter:   got.Time.Sub(typed),
	}
}

// reportIdle reports the parts of the idle rounds.
func reportIdle(b *testing.B, rounds []idleSplit) samples {
	var total, extract, wait, typing, enter samples
	for _, r := range rounds {
		total = append(total, r.total)
		extract = append(extract, r.extract)
		wait = append(wait, r.wait)
		typing = append(typing, r.typing)
		enter = append(enter, r.enter)
		b.Logf("idle: total %v = extract %v + wait %v + typing %v (of which Enter→model %v)", r.total, r.extract, r.wait, r.typing, r.enter)
	}
	total.report(b, "total")
	extract.report(b, "extract")
	wait.report(b, "wait")
	typing.report(b, "typing")
	enter.report(b, "enter")
	return total
}

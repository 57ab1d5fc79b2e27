package e2e

// Benchmarks of issues 6 (delivery) and 9 (Claude Code's hooks), measured
// with the real Claude Code under the real relay wrap against mock models:
//
//	go test -tags sqlite_fts5 -run '^$' -bench Claude -benchtime 1x ./internal/e2e
//
// Each one skips when Claude Code is not installed. Times come from the
// mock models' clocks (when a request arrived, when a turn's answer was
// completely sent), the envelopes' created times and the recipients'
// receipts, all on this machine's clock.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// benchMessagesEnv sets how many messages BenchmarkClaudeSuccessRate sends
// (default benchMessagesDefault, the 50 of issue 6).
const (
	benchMessagesEnv     = "RELAY_BENCH_MESSAGES"
	benchMessagesDefault = 50
	benchRounds          = 5  // samples per latency figure
	benchBurst           = 20 // messages in a burst (issue 6)
)

// BenchmarkClaudeRoundTrip (issue 6): Alice's Claude Code writes an
// @relay:Bob line; the time from her model's turn being answered to idle
// Bob's model receiving the message, split into extraction (Alice's Stop
// hook to the stored message), the wait for Bob to be idle (stored to
// typing), and typing (paste, settle, Enter, Claude Code's submit).
func BenchmarkClaudeRoundTrip(b *testing.B) {
	bt := newBenchTeam(b)
	alice := bt.claude("Alice", "", aliceScript)
	bob := bt.claude("Bob", "", mockmodel.Fixed("OK."))
	b.ResetTimer()
	var rounds []idleSplit
	for i := 0; i < b.N; i++ {
		for r := 0; r < benchRounds; r++ {
			rounds = append(rounds, bt.idleRound(alice, bob, fmt.Sprintf("rt-%d-x", i*benchRounds+r)))
		}
	}
	b.StopTimer()
	reportIdle(b, rounds)
	b.ReportMetric(0, "ns/op")
}

// benchMessages returns how many messages the success rate is measured on.
func benchMessages(tb testing.TB) int {
	s := os.Getenv(benchMessagesEnv)
	if s == "" {
		return benchMessagesDefault
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		tb.Fatalf("%s=%q: want a positive number of messages", benchMessagesEnv, s)
	}
	return n
}

// BenchmarkClaudeSuccessRate (issue 6): messages sent with relay send to an
// idle Claude Code Bob, one at a time once the previous one reached his
// model and he is idle again: how many reached his model, how many more
// than once (bar: all of them, none twice). RELAY_BENCH_MESSAGES sets the
// count (default 50, the figure).
func BenchmarkClaudeSuccessRate(b *testing.B) {
	bt := newBenchTeam(b)
	bob := bt.claude("Bob", "", mockmodel.Fixed("OK."))
	n := benchMessages(b)
	b.ResetTimer()
	var lat samples
	var toks []string
	missed, typed := 0, 0
	for i := 0; i < b.N*n; i++ {
		tok := fmt.Sprintf("ok-%d-x", i)
		toks = append(toks, tok)
		env := bt.send(tok + " the nightly build finished, results are in the usual place.")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got, err := bob.model.WaitForRequest(ctx, tok)
		cancel()
		if err != nil {
			missed++
			b.Logf("%s did not reach Bob's model within 30 s: %v", tok, err)
			continue
		}
		if !strings.Contains(got.LastUser, "Stop hook feedback") {
			typed++
		}
		lat = append(lat, got.Time.Sub(env.Created))
		bt.waitIdle("Bob", bt.replied(bob, got.Turn))
	}
	b.StopTimer()
	// Give a late or repeated delivery every chance to show up.
	time.Sleep(3 * time.Second)
	reached, dups := 0, 0
	for _, tok := range toks {
		switch c := bob.model.Count(tok); {
		case c == 0:
		case c == 1:
			reached++
		default:
			reached++
			dups += c - 1
			b.Logf("%s reached Bob's model %d times", tok, c)
		}
	}
	b.ReportMetric(float64(len(toks)), "sent")
	b.ReportMetric(float64(reached), "reached")
	b.ReportMetric(float64(dups), "duplicates")
	b.ReportMetric(float64(typed), "typed")
	b.ReportMetric(float64(reached)/float64(len(toks)), "success-ratio")
	lat.report(b, "send-to-model")
	b.ReportMetric(0, "ns/op")
	if missed > 0 || dups > 0 {
		b.Errorf("%d of %d messages did not reach Bob's model in time, %d duplicates", missed, len(toks), dups)
	}
}

// BenchmarkClaudeBurst (issue 6): 20 messages sent back to back with relay
// send to an idle Claude Code Bob: the time from the first send to the last
// message in Bob's model requests (bar: under 2 s), with the default
// delivery mode (wait) and with --delivery queue. send-s is how long the 20
// relay send commands took by themselves (the floor), turns how many model
// turns carried the messages.
func BenchmarkClaudeBurst(b *testing.B) {
	for _, mode := range []delivery.Mode{delivery.ModeWait, delivery.ModeQueue} {
		b.Run(string(mode), func(b *testing.B) {
			bt := newBenchTeam(b)
			wrapMode := mode
			if mode == delivery.ModeWait {
				wrapMode = "" // the default, as tm.claude starts it
			}
			bob := bt.claude("Bob", wrapMode, mockmodel.Fixed("OK."))
			b.ResetTimer()
			var burst, sends, after samples
			turns, dups := 0, 0
			for i := 0; i < b.N; i++ {
				d, s, t, dup, a := bt.burst(bob, i)
				burst, sends, after = append(burst, d), append(sends, s), append(after, a)
				turns, dups = max(turns, t), dups+dup
			}
			b.StopTimer()
			b.ReportMetric(burst.pct(1).Seconds(), "burst-s")
			b.ReportMetric(sends.pct(1).Seconds(), "send-s")
			b.ReportMetric(ms(after.pct(1)), "after-last-send-ms")
			b.ReportMetric(float64(turns), "turns")
			b.ReportMetric(float64(dups), "duplicates")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// burst sends benchBurst messages back to back and waits for all of them
// in Bob's model. It returns the time from the first send to the last
// arrival, the time the sends took, how many model turns carried them, how
// many arrived more than once, and the time from the last send's return to
// the last arrival.
func (bt *benchTeam) burst(bob *claudeAgent, round int) (total, sends time.Duration, turns, dups int, after time.Duration) {
	bt.tb.Helper()
	toks := make([]string, benchBurst)
	for j := range toks {
		toks[j] = fmt.Sprintf("burst%d-%d-x", round, j)
	}
	before := len(bob.model.Turns())
	start := time.Now()
	for _, tok := range toks {
		bt.send(tok + " status update from the build farm.")
	}
	sent := time.Now()
	var last mockmodel.Request
	for _, tok := range toks {
		if r := bt.turn(bob, tok, 60*time.Second); r.Time.After(last.Time) {
			last = r
		}
	}
	bt.waitIdle("Bob", bt.replied(bob, last.Turn))
	time.Sleep(2 * time.Second) // a repeat would show up now
	carried := map[int]bool{}
	for _, r := range bob.model.Turns()[before:] {
		k := 0
		for _, tok := range toks {
			if strings.Contains(r.LastUser, tok) {
				carried[r.Turn] = true
				k++
			}
		}
		if k > 0 {
			how := "typed"
			if strings.Contains(r.LastUser, "Stop hook feedback") {
				how = "handed over at Stop"
			}
			bt.tb.Logf("Bob's turn %d carried %d messages, %s, %v after the first send", r.Turn, k, how, r.Time.Sub(start))
		}
	}
	for _, tok := range toks {
		if c := bob.model.Count(tok); c > 1 {
			dups += c - 1
			bt.tb.Logf("%s reached Bob's model %d times", tok, c)
		}
	}
	return last.Time.Sub(start), sent.Sub(start), len(carried), dups, last.Time.Sub(sent)
}

// BenchmarkClaudeStopVsTyping (issue 9): a message reaching Bob's model
// when Bob is idle (typed in: from Alice's turn being answered to Bob's
// model request) beside one waiting for Bob while he works (handed to his
// model as the Stop hook's answer: from Bob's turn being answered to his
// next model request). hook-vs-typing is the ratio of the p50s; ready-*
// measures both from the moment the message is stored and Bob is free.
func BenchmarkClaudeStopVsTyping(b *testing.B) {
	bt := newBenchTeam(b)
	var mu sync.Mutex
	gates := map[string]chan struct{}{}
	gateFor := func(tok string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if gates[tok] == nil {
			gates[tok] = make(chan struct{})
		}
		return gates[tok]
	}
	alice := bt.claude("Alice", "", aliceScript)
	bob := bt.claude("Bob", "", func(r mockmodel.Request) mockmodel.Reply {
		if tok := token.FindString(r.LastUser); strings.HasPrefix(tok, "long-") {
			return mockmodel.Reply{Text: "Working on the long task.", Gate: gateFor(tok)}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	b.ResetTimer()
	var idle []idleSplit
	var hook, hookReady samples
	viaHook := 0
	for i := 0; i < b.N; i++ {
		// The idle rounds first: typing waits 2 s after the human's last
		// key, and the busy rounds below type Bob's prompts.
		for r := 0; r < benchRounds; r++ {
			idle = append(idle, bt.idleRound(alice, bob, fmt.Sprintf("idle-%d-x", i*benchRounds+r)))
		}
		for r := 0; r < benchRounds; r++ {
			// Bob works; a message waits for him; his turn ends.
			long := fmt.Sprintf("long-%d-x", i*benchRounds+r)
			msg := fmt.Sprintf("busy-%d-x", i*benchRounds+r)
			bob.term.Submit("start the " + long)
			busy := bt.turn(bob, long, 60*time.Second)
			env := bt.send(msg + " the staging database is back.")
			bt.waitPresence("Bob", "holding a message", func(p bus.Presence) bool { return p.Pending > 0 })
			time.Sleep(300 * time.Millisecond) // the wrapper takes it from its inbox
			close(gateFor(long))
			done := bt.replied(bob, busy.Turn)
			got := bt.turn(bob, msg, 60*time.Second)
			if strings.Contains(got.LastUser, "Stop hook feedback") {
				viaHook++
			} else {
				b.Logf("%s was typed, not handed over at Stop", msg)
			}
			hook = append(hook, got.Time.Sub(done))
			hookReady = append(hookReady, got.Time.Sub(later(done, env.Created)))
			b.Logf("busy: Bob's turn answered → his next request with the message %v", got.Time.Sub(done))
			bt.waitIdle("Bob", bt.replied(bob, got.Turn))
		}
	}
	b.StopTimer()
	typing := reportIdle(b, idle)
	var typingReady samples
	for _, r := range idle {
		typingReady = append(typingReady, r.wait+r.typing)
	}
	hook.report(b, "hook")
	typingReady.report(b, "ready-typing")
	hookReady.report(b, "ready-hook")
	b.ReportMetric(float64(viaHook), "via-hook")
	if t := typing.pct(0.5); t > 0 {
		b.ReportMetric(float64(hook.pct(0.5))/float64(t), "hook-vs-typing")
	}
	b.ReportMetric(0, "ns/op")
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

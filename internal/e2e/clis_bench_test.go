package e2e

// Benchmarks of issue 10, with the real Codex and Gemini CLI under the
// real relay wrap against mock models:
//
//	go test -tags sqlite_fts5 -run '^$' -bench CLIRoundTrip -benchtime 1x ./internal/e2e
//
// Times come from the mock models' clocks: when the sender's turn was
// completely answered, and when the target's model request arrived.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/agents/registry"
	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/mockmodel"
)

// cliBenchMessages is how many messages each CLI round trip sends (issue
// 10: over 20 messages, 20 must arrive, none twice).
const cliBenchMessages = 20

// BenchmarkCLIRoundTrip (issue 10): for Codex and for Gemini CLI, Alice
// and Bob both run it; Alice's model writes an @relay:Bob line, one
// message at a time with Bob idle. Reported: the time from the end of
// Alice's reply (her model's last byte) to Bob's model request that holds
// the message (p50, max), how many of the messages arrived, and how many
// arrived more than once. The time is split as BenchmarkClaudeRoundTrip
// splits it: extract (reply end to the stored message), wait (to the start
// of typing: the inbox and the wait for Bob to be idle), typing (paste,
// settle, Enter, the CLI's own submit) and, of that, Enter to the request.
func BenchmarkCLIRoundTrip(b *testing.B) {
	for _, kind := range screenCLIs {
		b.Run(kind, func(b *testing.B) {
			bt := newBenchTeamOf(b, kind)
			env := relayVars(bt.env)
			// 20 messages from Alice to Bob within a minute are more than
			// loop damping lets through by default (10).
			xdg := b.TempDir()
			if err := os.MkdirAll(filepath.Join(xdg, "relay"), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(xdg, "relay", "config.toml"), []byte("[damping]\npair_max = 100\nagent_max = 100\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			env = append(env, "XDG_CONFIG_HOME="+xdg)
			alice := startScreenCLI(b, env, kind, "Alice", 0, 0, aliceScript)
			bob := startScreenCLI(b, env, kind, "Bob", 0, 0, mockmodel.Fixed("OK."))
			bt.waitIdle("Alice", time.Time{})
			bt.waitIdle("Bob", time.Time{})
			b.ResetTimer()
			prof, err := registry.Named(kind)
			if err != nil {
				b.Fatal(err)
			}
			var lat, extract, wait, typing, enter samples
			var toks []string
			for i := 0; i < b.N*cliBenchMessages; i++ {
				tok := fmt.Sprintf("cli-%d-x", i)
				toks = append(toks, tok)
				prompt := "please send " + tok
				alice.term.Paste(prompt)
				if _, err := alice.term.WaitScreen(10*time.Second, func(s string) bool { return strings.Contains(s, prompt) }); err != nil {
					b.Fatalf("%s: prompt not in Alice's input box: %v", tok, err)
				}
				alice.term.Enter()
				ask := alice.waitTurn(b, tok, 60*time.Second)
				got := bob.waitTurn(b, tok, 60*time.Second)
				done := replyEnd(b, alice, ask.Turn)
				env := bt.envelope(tok)
				typed := bt.receipt(env.ID, bus.StatusDelivered).Time
				start := typed.Add(-prof.Settle)
				lat = append(lat, got.Time.Sub(done))
				extract = append(extract, env.Created.Sub(done))
				wait = append(wait, start.Sub(env.Created))
				typing = append(typing, got.Time.Sub(start))
				enter = append(enter, got.Time.Sub(typed))
				b.Logf("%s: total %v = extract %v + wait %v + typing %v (of which Enter→model %v)", tok,
					got.Time.Sub(done), env.Created.Sub(done), start.Sub(env.Created), got.Time.Sub(start), got.Time.Sub(typed))
				alice.waitIdle(b)
				bob.waitIdle(b)
			}
			b.StopTimer()
			reached, dups := 0, 0
			for _, tok := range toks {
				switch c := bob.model.Count(tok); {
				case c == 1:
					reached++
				case c > 1:
					reached++
					dups += c - 1
					b.Logf("%s reached Bob's model %d times", tok, c)
				}
			}
			lat.report(b, "reply-end-to-model")
			extract.report(b, "extract")
			wait.report(b, "wait")
			typing.report(b, "typing")
			enter.report(b, "enter")
			b.ReportMetric(float64(len(toks)), "sent")
			b.ReportMetric(float64(reached), "reached")
			b.ReportMetric(float64(dups), "duplicates")
			b.ReportMetric(0, "ns/op")
			if reached != len(toks) || dups > 0 {
				b.Errorf("%d of %d messages reached Bob's model, %d duplicates", reached, len(toks), dups)
			}
		})
	}
}

// replyEnd waits until a's model has completely answered turn n, and
// returns when.
func replyEnd(tb testing.TB, a *screenCLI, n int) time.Time {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := a.model.WaitReplied(ctx, n)
	if err != nil {
		tb.Fatalf("%s's model, turn %d: %v", a.name, n, err)
	}
	return req.Replied
}

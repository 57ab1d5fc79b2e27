package scanner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/scanner"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// The live tests are an external test package: internal/testing/agenttest reads
// the agents registry, which imports scanner.

// liveAgent starts one real CLI against its mock model.
type liveAgent struct {
	name, profile string
	start         func(t *testing.T, script mockmodel.Script, cols, rows int) (*agenttest.Term, *mockmodel.Log)
	ready         func(screen string) bool
}

func liveAgents() []liveAgent {
	claude := func(renderer string) func(*testing.T, mockmodel.Script, int, int) (*agenttest.Term, *mockmodel.Log) {
		return func(t *testing.T, script mockmodel.Script, cols, rows int) (*agenttest.Term, *mockmodel.Log) {
			m := mockmodel.NewAnthropic(mockmodel.Options{Script: script})
			t.Cleanup(m.Close)
			return agenttest.Start(t, agenttest.Claude(t, agenttest.ClaudeOptions{Model: m.URL, Cols: cols, Rows: rows, Renderer: renderer})), m.Log
		}
	}
	return []liveAgent{
		{"claude-fullscreen", "claude", claude("fullscreen"), agenttest.ClaudeReady},
		{"claude-classic", "claude", claude("classic"), agenttest.ClaudeReady},
		{"codex", "codex", func(t *testing.T, script mockmodel.Script, cols, rows int) (*agenttest.Term, *mockmodel.Log) {
			m := mockmodel.NewResponses(mockmodel.Options{Script: script})
			t.Cleanup(m.Close)
			return agenttest.Start(t, agenttest.Codex(t, agenttest.CodexOptions{Model: m.URL, Cols: cols, Rows: rows})), m.Log
		}, agenttest.CodexReady},
		{"gemini", "gemini", func(t *testing.T, script mockmodel.Script, cols, rows int) (*agenttest.Term, *mockmodel.Log) {
			m := mockmodel.NewGemini(mockmodel.Options{Script: script})
			t.Cleanup(m.Close)
			return agenttest.Start(t, agenttest.Gemini(t, agenttest.GeminiOptions{Model: m.URL, Cols: cols, Rows: rows})), m.Log
		}, agenttest.GeminiReady},
	}
}

// TestLiveAgents runs the real CLIs (each skipped when it is not installed;
// CI installs them) against their mock models and scans their output as it
// arrives, on the real clock: the command, streamed slowly, fires once and
// whole; a resize (after which the CLI re-wraps and redraws) does not fire
// it again; the same words in the next reply fire again. Claude Code runs
// with both its renderers: the alternate screen and the classic inline one,
// which scrolls.
func TestLiveAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real agent CLIs")
	}
	const body = "Please run the integration tests on branch feature/auth and report back the failures you see, with file names and line numbers."
	for _, a := range liveAgents() {
		t.Run(a.name, func(t *testing.T) {
			text := "I'll ask Bob.\n\n@relay:Bob " + body + "\n\nWaiting for him."
			// The first reply streams slowly, so that half-written lines
			// are on screen for a while.
			slow := mockmodel.Reply{Text: text, Chunk: 6, ChunkDelay: 40 * time.Millisecond}
			term, m := a.start(t, mockmodel.Queue(slow, mockmodel.Reply{Text: text}), 100, 30)

			cues, _ := scanner.CuesFor(a.profile)
			s := scanner.New(scanner.Options{Cols: 100, Rows: 30, Cues: cues})
			var mu sync.Mutex
			var fired []patterns.Command
			s.Subscribe(func(e scanner.Event) {
				if e.Kind == scanner.EventCommand {
					mu.Lock()
					fired = append(fired, e.Command)
					mu.Unlock()
				}
			})
			// Feed the scanner as the bytes arrive; a resize is applied
			// between two reads, as the wrapper does.
			resize := make(chan [2]int)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			t.Cleanup(func() { cancel(); <-done })
			go func() {
				defer close(done)
				off := 0
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for {
					raw := term.Raw()
					s.Write(raw[off:])
					off = len(raw)
					s.Tick()
					select {
					case <-ctx.Done():
						return
					case sz := <-resize:
						s.Resize(sz[0], sz[1])
						if err := term.Resize(sz[0], sz[1]); err != nil {
							t.Error(err)
						}
					case <-tick.C:
					}
				}
			}()
			count := func(want int) func() error {
				return func() error {
					mu.Lock()
					defer mu.Unlock()
					n := 0
					for _, c := range fired {
						if c.NS != "relay" || c.Target != "Bob" || strings.Join(strings.Fields(c.Body), " ") != body {
							return fmt.Errorf("fired @%s:%s %q", c.NS, c.Target, c.Body)
						}
						n++
					}
					if n != want {
						return fmt.Errorf("fired %d times, want %d", n, want)
					}
					return nil
				}
			}
			steady := func(want int) {
				t.Helper()
				testutil.WaitFor(t, 30*time.Second, 50*time.Millisecond, count(want))
				if err := term.WaitQuiet(2*time.Second, 20*time.Second); err != nil {
					t.Fatal(err)
				}
				// Idle means the scanner has read the quiet screen: what
				// was going to fire has fired.
				testutil.WaitFor(t, 10*time.Second, 20*time.Millisecond, func() error {
					if s.State().Busy {
						return fmt.Errorf("scanner still busy")
					}
					return nil
				})
				if err := count(want)(); err != nil {
					t.Fatalf("%v\nscreen:\n%s", err, s.Text())
				}
			}

			if _, err := term.WaitReady(60*time.Second, a.ready); err != nil {
				t.Fatalf("%s never became ready: %v", a.name, err)
			}
			if _, err := term.SubmitConfirm("ask Bob", 0, 20*time.Second, func() bool { return m.Count("ask Bob") > 0 }); err != nil {
				t.Fatal(err)
			}
			steady(1)
			resize <- [2]int{70, 30}
			steady(1)
			if _, err := term.SubmitConfirm("ask again", 0, 20*time.Second, func() bool { return m.Count("ask again") > 0 }); err != nil {
				t.Fatal(err)
			}
			steady(2)
		})
	}
}

package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// fireSink counts the commands a session would fire: those in the texts
// the hooks hand over and the screen commands handed back.
type fireSink struct {
	turnSink
	mu    sync.Mutex
	fired []string
}

func (s *fireSink) Texts(texts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range texts {
		for _, c := range patterns.ExtractText(t, patterns.Options{Mode: patterns.Markdown}) {
			s.fired = append(s.fired, c.Target+" "+c.Body)
		}
	}
}

func (s *fireSink) Commands(cmds []patterns.Command) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cmds {
		s.fired = append(s.fired, c.Target+" "+c.Body)
	}
}

func (s *fireSink) screen(src agents.Source, c patterns.Command) {
	if !src.Screen(c) {
		s.Commands([]patterns.Command{c}) // the screen is the source: it fires
	}
}

func (s *fireSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fired)
}

// TestHooksFireOnceWhateverArrives: Claude Code runs each hook with a time
// limit, and on a loaded machine relay's hook process may be killed before
// it reaches the wrapper, or reach it late (a SessionStart that took 7.7 s
// against its 5 s limit). Whichever hooks arrive, in whatever order
// against the screen, the reply's command fires once: the screen's copy is
// held until a hook says the exact text gives it, and fired only when no
// hook comes. Before, a lost SessionStart made the screen fire it and the
// Stop hook fire it again (Bob got Alice's message twice).
func TestHooksFireOnceWhateverArrives(t *testing.T) {
	t.Parallel()
	const reply = "Asking.\n\n@relay:Bob what is the status of the nightly build?"
	cmd := patterns.Command{NS: "relay", Target: "Bob", Body: "what is the status of the nightly build?"}
	for _, tc := range []struct {
		name  string
		steps []string // hook events, "screen" (the screen shows the reply), "record" (the transcript gets it)
	}{
		{"all hooks", []string{"SessionStart", "UserPromptSubmit", "screen", "record", "Stop"}},
		{"record after Stop", []string{"SessionStart", "UserPromptSubmit", "screen", "Stop", "record"}},
		{"SessionStart lost", []string{"UserPromptSubmit", "screen", "record", "Stop"}},
		{"SessionStart lost, record after Stop", []string{"UserPromptSubmit", "screen", "Stop", "record"}},
		{"only Stop", []string{"screen", "record", "Stop"}},
		{"SessionStart late", []string{"screen", "SessionStart", "record", "Stop"}},
		{"no hooks", []string{"screen", "record"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "session.jsonl")
			sink := &fireSink{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := &hooks{log: slog.New(slog.DiscardHandler), sink: sink, ctx: ctx, due: 200 * time.Millisecond}
			hooked := false
			for _, step := range tc.steps {
				switch step {
				case "screen":
					sink.screen(h, cmd)
				case "record":
					rec, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": "a1",
						"message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": reply}}}})
					if err := os.WriteFile(path, append(rec, '\n'), 0o600); err != nil {
						t.Fatal(err)
					}
				default:
					hooked = true
					payload, _ := json.Marshal(map[string]any{"hook_event_name": step, "transcript_path": path,
						"source": "startup", "prompt": "Ask Bob about the build.", "last_assistant_message": reply})
					h.handle(ctx, hookrpc.Request{Event: step, Payload: payload})
				}
			}
			h.read(nil) // the late read after Stop
			if !hooked {
				testutil.Eventually(t, func() error {
					if n := sink.count(); n != 1 {
						return fmt.Errorf("fired %d times, want the screen's command once", n)
					}
					return nil
				})
			}
			if got := sink.count(); got != 1 {
				t.Errorf("fired %d times, want once: %s", got, strings.Join(sink.fired, " | "))
			}
			if !hooked {
				// A hook arriving after relay gave up on them adds nothing.
				payload, _ := json.Marshal(map[string]any{"hook_event_name": "Stop", "transcript_path": path, "last_assistant_message": reply})
				h.handle(ctx, hookrpc.Request{Event: "Stop", Payload: payload})
				h.read(nil)
				if got := sink.count(); got != 1 {
					t.Errorf("after a late Stop: fired %d times, want once", got)
				}
			}
		})
	}
}

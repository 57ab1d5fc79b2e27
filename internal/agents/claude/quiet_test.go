package claude

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// hook hands h one hook of event with the transcript at path.
func hook(ctx context.Context, h *hooks, event, path string, extra map[string]any) {
	m := map[string]any{"hook_event_name": event, "transcript_path": path, "source": "startup", "prompt": "Ask Bob."}
	for k, v := range extra {
		m[k] = v
	}
	payload, _ := json.Marshal(m)
	h.handle(ctx, hookrpc.Request{Event: event, Payload: payload})
}

// TestLostStopHook: Claude Code kills a hook that outruns its time limit,
// and on a loaded machine relay's Stop hook process may be the one killed.
// Before, the agent then stayed busy, its inbox deaf, until its next hook,
// which comes only when something is typed: nothing ever was. Now a busy
// turn with no hook for a while hands the turns to the screen; when the
// screen says the turn ended, the transcript gives the reply's command,
// once, even when the Stop hook does arrive late after all.
func TestLostStopHook(t *testing.T) {
	t.Parallel()
	const reply = "Asking.\n\n@relay:Bob what is the status of the nightly build?"
	path := filepath.Join(t.TempDir(), "session.jsonl")
	sink := &fireSink{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &hooks{log: slog.New(slog.DiscardHandler), sink: sink, ctx: ctx, quiet: 50 * time.Millisecond, beat: make(chan struct{}, 1)}
	go h.watchQuiet(ctx, sink)

	hook(ctx, h, "SessionStart", path, nil)
	hook(ctx, h, "UserPromptSubmit", path, nil)
	if got := sink.last(); !got.Exact || !got.Busy {
		t.Fatalf("after the prompt the turn is %+v, want busy from the hooks", got)
	}
	rec, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": "a1",
		"message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": reply}}}})
	if err := os.WriteFile(path, append(rec, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	// The Stop hook is lost: the screen takes the turns.
	testutil.Eventually(t, func() error {
		if got := sink.last(); got.Exact {
			return fmt.Errorf("the turn is still the hooks' (%+v)", got)
		}
		return nil
	})
	// The screen says the turn ended: the session tells the source.
	h.Idle()
	testutil.Eventually(t, func() error {
		if n := sink.count(); n != 1 {
			return fmt.Errorf("fired %d times, want the reply's command once", n)
		}
		return nil
	})
	// The Stop hook comes late after all: the turns are the hooks' again,
	// and the command does not fire twice.
	hook(ctx, h, "Stop", path, map[string]any{"last_assistant_message": reply})
	h.read(nil) // the late read
	if got := sink.last(); !got.Exact || got.Busy {
		t.Errorf("after the late Stop the turn is %+v, want idle from the hooks", got)
	}
	if n := sink.count(); n != 1 {
		t.Errorf("fired %d times after the late Stop, want once: %s", n, strings.Join(sink.fired, " | "))
	}
}

// TestQuietTurn: what a busy turn with no hook for a while means.
func TestQuietTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		hooks      []string // events, in order
		asks       int      // dialogs open
		give, wait bool
	}{
		{"busy, no hook", []string{"SessionStart", "UserPromptSubmit"}, 0, true, false},
		{"a tool runs", []string{"SessionStart", "UserPromptSubmit", "PreToolUse"}, 0, true, false},
		{"a dialog is open", []string{"SessionStart", "UserPromptSubmit", "PreToolUse"}, 1, false, true},
		{"the turn ended", []string{"SessionStart", "UserPromptSubmit", "Stop"}, 0, false, false},
		{"started, no turn yet", []string{"SessionStart"}, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "session.jsonl")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := &hooks{log: slog.New(slog.DiscardHandler), sink: &fireSink{}, ctx: ctx}
			for _, ev := range tc.hooks {
				hook(ctx, h, ev, path, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "make test"}})
			}
			for range tc.asks {
				h.asks = append(h.asks, &asking{})
			}
			give, wait := h.quietTurn()
			if give != tc.give || wait != tc.wait {
				t.Errorf("quietTurn = give %v, wait %v; want %v, %v", give, wait, tc.give, tc.wait)
			}
			if tc.give {
				if again, _ := h.quietTurn(); again {
					t.Error("the turns were handed to the screen twice")
				}
				hook(ctx, h, "PostToolUse", path, nil)
				if h.screenTurns {
					t.Error("a hook did not take the turns back")
				}
			}
		})
	}
}

var _ agents.Source = (*hooks)(nil)

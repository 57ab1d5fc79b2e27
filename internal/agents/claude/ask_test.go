package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/testing/testutil"
)

// turnSink records the turns a source reports; the rest does nothing.
type turnSink struct {
	mu    sync.Mutex
	turns []agents.Turn
}

func (s *turnSink) Texts([]string)                           {}
func (s *turnSink) Prompted([]string)                        {}
func (s *turnSink) Commands([]patterns.Command)              {}
func (s *turnSink) ToolCall(context.Context, string, []byte) {}
func (s *turnSink) HandOver() (string, func(error), bool)    { return "", nil, false }
func (s *turnSink) Idle() bool                               { return false }
func (s *turnSink) Pid() int                                 { return 0 }
func (s *turnSink) Go(f func())                              { go f() }
func (s *turnSink) BeforeToolCall(context.Context, string, []byte) agents.ToolVerdict {
	return agents.ToolVerdict{}
}
func (s *turnSink) Turn(t agents.Turn) {
	s.mu.Lock()
	s.turns = append(s.turns, t)
	s.mu.Unlock()
}

func (s *turnSink) last() agents.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) == 0 {
		return agents.Turn{}
	}
	return s.turns[len(s.turns)-1]
}

func (s *turnSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

// TestPermissionHook: the PermissionRequest hook reports the prompt and
// stays open until relay answers it (allow, deny with a reason), the human
// answers on screen (Dismiss: no answer) or the hook's time is up; a
// Notification after that does not bring the wait back.
func TestPermissionHook(t *testing.T) {
	t.Parallel()
	payload := []byte(`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch marker","description":"x"}}`)
	for _, tc := range []struct {
		name   string
		answer func(h *hooks, id string, cancel context.CancelFunc)
		want   string
	}{
		{"allow", func(h *hooks, id string, _ context.CancelFunc) { mustAnswer(t, h, id, true, "") },
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
		{"deny", func(h *hooks, id string, _ context.CancelFunc) { mustAnswer(t, h, id, false, "not on Fridays") },
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not on Fridays"}}}`},
		{"dismissed", func(h *hooks, _ string, _ context.CancelFunc) { h.Dismiss() }, ""},
		{"hook ends", func(_ *hooks, _ string, cancel context.CancelFunc) { cancel() }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sink := &turnSink{}
			h := &hooks{log: slog.New(slog.DiscardHandler), sink: sink, state: hooksOn}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan hookrpc.Response, 1)
			go func() { done <- h.handle(ctx, hookrpc.Request{Event: "PermissionRequest", Payload: payload}) }()
			var ask agents.Ask
			testutil.Eventually(t, func() error {
				tn := sink.last()
				if !tn.Waiting || tn.Ask == nil {
					return fmt.Errorf("turn %+v, want waiting on a prompt", tn)
				}
				ask = *tn.Ask
				return nil
			})
			if ask.Tool != "Bash" || ask.Detail != "touch marker" || ask.ID == "" {
				t.Fatalf("prompt %+v, want Bash touch marker", ask)
			}
			tc.answer(h, ask.ID, cancel)
			var resp hookrpc.Response
			select {
			case resp = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the hook is still open")
			}
			if resp.Stdout != tc.want {
				t.Errorf("hook printed %s, want %s", resp.Stdout, tc.want)
			}
			if resp.Sent != nil {
				resp.Sent(nil)
			}
			if h.waiting() {
				t.Error("the prompt is still open")
			}
			if err := h.Answer(ask.ID, true, ""); !errors.Is(err, agents.ErrNoAsk) {
				t.Errorf("a second answer: %v, want ErrNoAsk", err)
			}
			n := sink.count()
			h.handle(context.Background(), hookrpc.Request{Event: "Notification",
				Payload: []byte(`{"hook_event_name":"Notification","notification_type":"permission_prompt"}`)})
			if sink.count() != n {
				t.Errorf("a late Notification reported %+v", sink.last())
			}
		})
	}
}

func mustAnswer(t *testing.T, h *hooks, id string, allow bool, reason string) {
	t.Helper()
	if err := h.Answer(id, allow, reason); err != nil {
		t.Fatal(err)
	}
}

func TestPermissionAnswerDefaultReason(t *testing.T) {
	t.Parallel()
	var v struct {
		HookSpecificOutput struct {
			Decision struct{ Behavior, Message string }
		}
	}
	if err := json.Unmarshal([]byte(PermissionAnswer(false, "")), &v); err != nil {
		t.Fatal(err)
	}
	if d := v.HookSpecificOutput.Decision; d.Behavior != "deny" || d.Message != DefaultDenyReason {
		t.Errorf("decision %+v", d)
	}
}

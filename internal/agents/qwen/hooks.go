package qwen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/statedir"
)

// PreToolUseEvent is the Qwen Code hook event relay installs when the
// session has BeforeToolCall handlers: Claude Code's PreToolUse, run
// before a tool executes (after its approval, if it needs one), whose
// answer may refuse the call.
const PreToolUseEvent = "PreToolUse"

// PostToolUseEvent is the Qwen Code hook event, run after a tool
// executed, that carries the context a BeforeToolCall handler added to an
// allowed call: Qwen Code 0.24.4 appends a PostToolUse hook's
// hookSpecificOutput.additionalContext to the tool's result for the model
// (after a blank line, with < and > escaped), where it drops
// PreToolUse's.
const PostToolUseEvent = "PostToolUse"

// postToolUseTimeout is Qwen Code's time limit for relay's PostToolUse
// hook, in seconds: above `relay hook`'s own (hookrpc.Limit, 2 s).
const postToolUseTimeout = 5

// maxPending bounds the contexts kept for PostToolUse: one whose tool
// never ran (cancelled, failed) is dropped once this many came after it.
const maxPending = 64

// preToolUseTimeout is Qwen Code's time limit for relay's hook, in
// seconds (its unit for command hooks under 1000): above `relay hook`'s
// own (hookrpc.Limit), so that Qwen Code never kills a hook that is
// printing its answer.
const preToolUseTimeout = 65

// hookName names relay's hook in Qwen Code (its /hooks browser).
const hookName = "relay"

// errNoRelayBinary is returned when the hook has no relay to run.
var errNoRelayBinary = errors.New("no relay binary for Qwen Code's PreToolUse hook")

// HookSettings returns the "hooks" settings that make Qwen Code run
// `RELAYBINARY hook PreToolUse` before each tool call and `RELAYBINARY hook
// PostToolUse` after it. Qwen Code runs the command through bash, so the
// binary is quoted; the socket's path goes in the hook's own environment
// ("env"), never into the command line.
func HookSettings(relayBinary, socket string) (map[string]any, error) {
	for _, s := range []string{relayBinary, socket} {
		if s == "" || strings.ContainsAny(s, "\x00\n\r") {
			return nil, fmt.Errorf("qwen hooks: bad path %q", s)
		}
	}
	hook := func(event string, timeout int, what string) []any {
		return []any{map[string]any{
			"matcher": "*",
			"hooks": []any{map[string]any{
				"type": "command", "name": hookName,
				"command":     shellQuote(relayBinary) + " hook " + event,
				"env":         map[string]any{hookrpc.SocketEnv: socket},
				"timeout":     timeout,
				"description": what,
			}},
		}}
	}
	return map[string]any{
		PreToolUseEvent:  hook(PreToolUseEvent, preToolUseTimeout, "relay: the session's BeforeToolCall handlers"),
		PostToolUseEvent: hook(PostToolUseEvent, postToolUseTimeout, "relay: the context its BeforeToolCall handlers added"),
	}, nil
}

// PreToolUseAnswer is the PreToolUse hook's answer for v, on stdout with
// exit code 0: a denial, whose reason (with v.Context after it: Qwen Code
// 0.24 drops a denial's additionalContext) reaches the model as the
// tool's error; or "" (the call goes on as Qwen Code decides; context for
// an allowed call goes with its PostToolUse, PostToolUseAnswer).
func PreToolUseAnswer(v agents.ToolVerdict) string {
	if !v.Block {
		return ""
	}
	reason := strings.TrimSpace(v.Reason)
	if reason == "" {
		reason = "refused by a BeforeToolCall hook"
	}
	if c := strings.TrimSpace(v.Context); c != "" {
		reason += "\n\n" + c
	}
	return specificOutput(map[string]string{
		"hookEventName": PreToolUseEvent, "permissionDecision": "deny", "permissionDecisionReason": reason,
	})
}

// PostToolUseAnswer is the PostToolUse hook's answer that appends context
// to the tool's result for the model; "" for no context.
func PostToolUseAnswer(context string) string {
	if context = strings.TrimSpace(context); context == "" {
		return ""
	}
	return specificOutput(map[string]string{"hookEventName": PostToolUseEvent, "additionalContext": context})
}

// specificOutput is {"hookSpecificOutput": fields}.
func specificOutput(fields map[string]string) string {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": fields})
	return string(b)
}

// toolHook is the part of the PreToolUse input that relay reads.
type toolHook struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
}

// key names one tool call across its PreToolUse and PostToolUse: Qwen
// Code's tool_use_id, else the tool and its input.
func (h toolHook) key() string {
	if h.ToolUseID != "" {
		return h.ToolUseID
	}
	return h.ToolName + "\x00" + string(h.ToolInput)
}

// hookSource answers relay's PreToolUse hook over a private socket, beside
// the chat record follower (nil when relay cannot follow the record: the
// screen then gives the commands). Each hook comes on its own connection.
type hookSource struct {
	inner agents.Source
	srv   *hookrpc.Server
	log   interface{ Warn(string, ...any) }

	mu      sync.Mutex
	sink    agents.HookSink
	pending []pendingContext // from PreToolUse, for the call's PostToolUse
}

// pendingContext is context a handler added to the allowed call key.
type pendingContext struct{ key, text string }

// startHooks listens for Qwen Code's PreToolUse hook and returns the hooks
// settings that call it; nil settings when the session has no
// BeforeToolCall handlers.
func startHooks(l agents.Launch) (*hookSource, map[string]any, error) {
	if !l.BeforeToolCall {
		return nil, nil, nil
	}
	if l.RelayBinary == "" {
		return nil, nil, errNoRelayBinary
	}
	dir, err := statedir.EnsureSub(l.Home, "run")
	if err != nil {
		return nil, nil, fmt.Errorf("hook socket folder: %w", err)
	}
	srv, err := hookrpc.Listen(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("hook socket: %w", err)
	}
	settings, err := HookSettings(l.RelayBinary, srv.Path())
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	srv.ErrorLog = func(err error) { l.Log.Warn("hook", "err", err) }
	return &hookSource{srv: srv, log: l.Log}, settings, nil
}

// Run answers the hook until ctx ends; the follower, if any, runs beside.
func (h *hookSource) Run(ctx context.Context, sink agents.Sink) error {
	defer h.srv.Close()
	h.mu.Lock()
	h.sink = sink
	h.mu.Unlock()
	if h.inner != nil {
		sink.Go(func() {
			if err := h.inner.Run(ctx, sink); err != nil && ctx.Err() == nil {
				h.log.Warn("Qwen Code's chat record is no longer read", "err", err)
			}
		})
	}
	if err := h.srv.Serve(ctx, h.handle); err != nil && ctx.Err() == nil {
		h.log.Warn("hook socket stopped; BeforeToolCall handlers no longer see Qwen Code's tool calls", "err", err)
		<-ctx.Done() // the follower goes on
		return err
	}
	return nil
}

// Screen, Active and Idle are the follower's; without one the screen gives
// the commands.
func (h *hookSource) Screen(c patterns.Command) bool {
	return h.inner != nil && h.inner.Screen(c)
}

func (h *hookSource) Active() bool { return h.inner != nil && h.inner.Active() }

func (h *hookSource) Idle() {
	if h.inner != nil {
		h.inner.Idle()
	}
}

func (h *hookSource) handle(ctx context.Context, req hookrpc.Request) hookrpc.Response {
	if req.Event != PreToolUseEvent && req.Event != PostToolUseEvent {
		return hookrpc.Response{}
	}
	var ev toolHook
	if err := json.Unmarshal(req.Payload, &ev); err != nil || ev.ToolName == "" {
		h.log.Warn("hook payload", "event", req.Event, "err", err)
		return hookrpc.Response{}
	}
	if req.Event == PostToolUseEvent {
		return hookrpc.Response{Stdout: PostToolUseAnswer(h.take(ev.key()))}
	}
	h.mu.Lock()
	sink := h.sink
	h.mu.Unlock()
	if sink == nil {
		return hookrpc.Response{}
	}
	v := sink.BeforeToolCall(ctx, ev.ToolName, ev.ToolInput)
	if !v.Block && strings.TrimSpace(v.Context) != "" {
		h.keep(ev.key(), v.Context)
	}
	return hookrpc.Response{Stdout: PreToolUseAnswer(v)}
}

// keep holds context for the PostToolUse of the call named key.
func (h *hookSource) keep(key, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pending = append(h.pending, pendingContext{key, text})
	if len(h.pending) > maxPending {
		h.pending = append([]pendingContext(nil), h.pending[len(h.pending)-maxPending:]...)
	}
}

// take removes and returns the first context kept for key, "" if none.
func (h *hookSource) take(key string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, p := range h.pending {
		if p.key == key {
			h.pending = append(h.pending[:i], h.pending[i+1:]...)
			return p.text
		}
	}
	return ""
}

// shellQuote quotes s as one word for bash: inside single quotes, where
// nothing is special but the single quote itself.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/statedir"
)

// The Gemini CLI hook events relay installs when the session has
// BeforeToolCall handlers. BeforeTool runs before a tool call (before its
// approval dialog too) and may refuse it; AfterTool runs after the tool and
// may add text to its result, which is how context from a BeforeToolCall
// handler reaches the model (Gemini CLI 0.61.0 ignores BeforeTool's
// additionalContext).
const (
	BeforeToolEvent = "BeforeTool"
	AfterToolEvent  = "AfterTool"
)

// Gemini CLI's time limits for relay's hooks, in milliseconds (its unit).
// They are above `relay hook`'s own (hookrpc.Limit), so that Gemini CLI
// never kills a hook that is printing its answer.
const (
	beforeToolTimeoutMS = 65_000
	afterToolTimeoutMS  = 5_000
)

// hookName names relay's hooks in Gemini CLI (its /hooks panel, and
// hooksConfig.disabled, which turns them off by this name).
const hookName = "relay"

// maxPending bounds the contexts kept for AfterTool: one whose tool never
// ran (refused by the human or a policy) must not be kept for ever.
const maxPending = 32

// HookSettings returns the "hooks" settings that make Gemini CLI run
// `RELAYBINARY hook BeforeTool` before each tool call and `… hook
// AfterTool` after it, each with RELAY_HOOK_SOCKET=socket set on its
// command line (Gemini CLI may strip variables from a hook's environment).
// Gemini CLI runs hook commands through a shell, so both are quoted.
func HookSettings(relayBinary, socket string) (map[string]any, error) {
	for _, s := range []string{relayBinary, socket} {
		if s == "" || strings.ContainsAny(s, "\x00\n\r") {
			return nil, fmt.Errorf("gemini hooks: bad path %q", s)
		}
	}
	hook := func(event string, timeout int) []any {
		cmd := hookrpc.SocketEnv + "=" + shellQuote(socket) + " " + shellQuote(relayBinary) + " hook " + event
		return []any{map[string]any{"hooks": []any{map[string]any{
			"type": "command", "name": hookName, "command": cmd, "timeout": timeout,
			"description": "relay: the session's BeforeToolCall handlers",
		}}}}
	}
	return map[string]any{
		BeforeToolEvent: hook(BeforeToolEvent, beforeToolTimeoutMS),
		AfterToolEvent:  hook(AfterToolEvent, afterToolTimeoutMS),
	}, nil
}

// addHooks appends relay's hook definitions to settings["hooks"], after
// those already there (Gemini CLI concatenates hook lists across its
// settings layers, so the user's own hooks still run).
func addHooks(settings map[string]any, hooks map[string]any) error {
	if len(hooks) == 0 {
		return nil
	}
	all, ok := settings["hooks"].(map[string]any)
	if !ok {
		if settings["hooks"] != nil {
			return fmt.Errorf("the system defaults' hooks are not an object")
		}
		all = map[string]any{}
	}
	for event, defs := range hooks {
		var have []any
		if all[event] != nil {
			if have, ok = all[event].([]any); !ok {
				return fmt.Errorf("the system defaults' hooks.%s is not a list", event)
			}
		}
		all[event] = append(have, defs.([]any)...)
	}
	settings["hooks"] = all
	return nil
}

// BeforeToolAnswer is a BeforeTool hook's answer for v: a denial whose
// reason reaches the model as the tool's error (with v.Context after it),
// or "" (the call goes on as Gemini CLI decides; context waits for
// AfterTool).
func BeforeToolAnswer(v agents.ToolVerdict) string {
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
	b, _ := json.Marshal(map[string]string{"decision": "deny", "reason": reason})
	return string(b)
}

// AfterToolAnswer is an AfterTool hook's answer that appends context to the
// tool's result, or "" when there is none.
func AfterToolAnswer(context string) string {
	if strings.TrimSpace(context) == "" {
		return ""
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]string{
		"hookEventName": AfterToolEvent, "additionalContext": context,
	}})
	return string(b)
}

// ToolHook is the part of Gemini CLI's BeforeTool and AfterTool input that
// relay reads (the same names as Claude Code's PreToolUse).
type ToolHook struct {
	SessionID     string          `json:"session_id"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

// ParseToolHook reads a BeforeTool or AfterTool hook's stdin JSON.
func ParseToolHook(payload []byte) (ToolHook, error) {
	var h ToolHook
	if err := json.Unmarshal(payload, &h); err != nil {
		return ToolHook{}, fmt.Errorf("gemini tool hook: %w", err)
	}
	if h.ToolName == "" {
		return ToolHook{}, fmt.Errorf("gemini tool hook: no tool_name")
	}
	return h, nil
}

// toolKey names one tool call across its BeforeTool and AfterTool: the
// tool and its input, the input's keys sorted.
func toolKey(h ToolHook) string {
	var v any
	in := []byte(h.ToolInput)
	if json.Unmarshal(h.ToolInput, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			in = b
		}
	}
	return h.ToolName + "\x00" + string(bytes.TrimSpace(in))
}

// hookSource answers relay's BeforeTool and AfterTool hooks over a private
// socket, beside the transcript follower (nil when relay cannot follow
// the transcript: the screen then gives the commands). Gemini CLI may run
// several tool calls at once: each hook comes on its own connection, so
// what they share is under mu.
type hookSource struct {
	inner agents.Source
	srv   *hookrpc.Server
	log   interface{ Warn(string, ...any) }

	mu      sync.Mutex
	sink    agents.HookSink
	pending []pendingContext // from BeforeTool, for the call's AfterTool
}

type pendingContext struct{ key, text string }

// startHooks listens for Gemini CLI's tool hooks and returns the hooks
// settings that call them; nil settings when the session has no
// BeforeToolCall handlers.
func startHooks(l agents.Launch) (*hookSource, map[string]any, error) {
	if !l.BeforeToolCall {
		return nil, nil, nil
	}
	if l.RelayBinary == "" {
		return nil, nil, fmt.Errorf("no relay binary for Gemini CLI's BeforeTool hook")
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
	h := &hookSource{srv: srv, log: l.Log}
	srv.ErrorLog = func(err error) { l.Log.Warn("hook", "err", err) }
	return h, settings, nil
}

// Run answers the hooks until ctx ends; the transcript follower, if any,
// runs beside it.
func (h *hookSource) Run(ctx context.Context, sink agents.Sink) error {
	defer h.srv.Close()
	h.mu.Lock()
	h.sink = sink
	h.mu.Unlock()
	if h.inner != nil {
		sink.Go(func() {
			if err := h.inner.Run(ctx, sink); err != nil && ctx.Err() == nil {
				h.log.Warn("Gemini CLI's transcript is no longer read", "err", err)
			}
		})
	}
	if err := h.srv.Serve(ctx, h.handle); err != nil && ctx.Err() == nil {
		h.log.Warn("hook socket stopped; BeforeToolCall handlers no longer see Gemini CLI's tool calls", "err", err)
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
	ev, err := ParseToolHook(req.Payload)
	if err != nil {
		h.log.Warn("hook payload", "event", req.Event, "err", err)
		return hookrpc.Response{}
	}
	h.mu.Lock()
	sink := h.sink
	h.mu.Unlock()
	if sink == nil {
		return hookrpc.Response{}
	}
	switch req.Event {
	case BeforeToolEvent:
		// The session's BeforeToolCall handlers may refuse the call (the
		// reason reaches the model as the tool's error) or add context,
		// which rides on the tool's result (AfterTool).
		v := sink.BeforeToolCall(ctx, ev.ToolName, ev.ToolInput)
		if v.Block {
			return hookrpc.Response{Stdout: BeforeToolAnswer(v)}
		}
		if strings.TrimSpace(v.Context) != "" {
			h.keep(toolKey(ev), v.Context)
		}
	case AfterToolEvent:
		if out := AfterToolAnswer(h.take(toolKey(ev))); out != "" {
			return hookrpc.Response{Stdout: out}
		}
	}
	return hookrpc.Response{}
}

// keep holds context for the AfterTool of the call named key.
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

// shellQuote quotes s as one word for a POSIX shell: inside single quotes,
// where nothing is special but the single quote itself.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

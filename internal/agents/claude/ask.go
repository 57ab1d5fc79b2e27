package claude

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
)

// Permission prompts. Claude Code runs the PermissionRequest hook as it
// shows its permission dialog, and takes the hook's decision, if one
// comes, as the answer while the dialog is up (2.1.328): so relay's hook
// stays open while the dialog waits, and `relay approve` answers through
// it, never by keys. When the human answers on screen, Claude Code leaves
// the hook running: the session sees the dialog go (Dismiss) and the hook
// ends without a word.

// asking is one PermissionRequest hook waiting for an answer.
type asking struct {
	ask    agents.Ask
	answer chan permDecision // buffered: one answer
}

// permDecision is how a prompt was answered; dismissed: on screen.
type permDecision struct {
	allow, dismissed bool
	reason           string
}

// AskOptions are the answers relay gives Claude Code's prompts.
func AskOptions() []string { return []string{"allow", "deny"} }

// DefaultDenyReason is what the model reads after a denial without reason.
const DefaultDenyReason = "The user denied this tool call."

// permission answers a PermissionRequest hook: it reports the prompt and
// waits for Answer, Dismiss or the hook's end.
func (h *hooks) permission(ctx context.Context, ev Hook) hookrpc.Response {
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	a := &asking{
		ask: agents.Ask{ID: hex.EncodeToString(id), Tool: ev.ToolName, Input: ev.ToolInput,
			Detail: agents.AskDetail(ev.ToolInput), Options: AskOptions()},
		answer: make(chan permDecision, 1),
	}
	h.mu.Lock()
	h.asks = append(h.asks, a)
	sink := h.sink
	h.mu.Unlock()
	h.report(sink, h.turn())
	var d permDecision
	select {
	case d = <-a.answer:
	case <-ctx.Done():
		// The hook's time is up: the dialog is the human's alone now.
		h.drop(a)
		h.log.Info("permission prompt left to the screen", "tool", ev.ToolName)
		return hookrpc.Response{}
	}
	if d.dismissed {
		return hookrpc.Response{}
	}
	return hookrpc.Response{
		Stdout: PermissionAnswer(d.allow, d.reason),
		Sent: func(err error) {
			if err != nil {
				h.log.Warn("permission answer not delivered", "tool", ev.ToolName, "err", err)
			}
			h.report(sink, h.turn())
		},
	}
}

// turn is the state the hooks report mid-turn: busy, and waiting on the
// oldest open prompt if any.
func (h *hooks) turn() agents.Turn {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := agents.Turn{Exact: true, Busy: true}
	if len(h.asks) > 0 {
		ask := h.asks[0].ask
		t.Waiting, t.Ask = true, &ask
	}
	return t
}

// waiting reports whether a prompt is open.
func (h *hooks) waiting() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.asks) > 0
}

// drop forgets a, reporting whether it was still open.
func (h *hooks) drop(a *asking) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := slices.Index(h.asks, a)
	if i < 0 {
		return false
	}
	h.asks = slices.Delete(h.asks, i, i+1)
	return true
}

// Answer answers the open prompt id through its hook.
func (h *hooks) Answer(id string, allow bool, reason string) error {
	h.mu.Lock()
	var a *asking
	for _, x := range h.asks {
		if x.ask.ID == id {
			a = x
		}
	}
	h.mu.Unlock()
	if a == nil || !h.drop(a) {
		return fmt.Errorf("prompt %s: %w", id, agents.ErrNoAsk)
	}
	a.answer <- permDecision{allow: allow, reason: reason}
	return nil
}

// Dismiss ends every open prompt without an answer: the human answered on
// screen.
func (h *hooks) Dismiss() {
	h.mu.Lock()
	asks := h.asks
	h.asks = nil
	h.mu.Unlock()
	for _, a := range asks {
		a.answer <- permDecision{dismissed: true}
	}
}

// PermissionAnswer is a PermissionRequest hook's decision: allow the tool
// call, or deny it with reason, which the model reads as the call's result.
func PermissionAnswer(allow bool, reason string) string {
	type decision struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message,omitempty"`
	}
	type specific struct {
		HookEventName string   `json:"hookEventName"`
		Decision      decision `json:"decision"`
	}
	d := decision{Behavior: "allow"}
	if !allow {
		d = decision{Behavior: "deny", Message: reason}
		if d.Message == "" {
			d.Message = DefaultDenyReason
		}
	}
	b, _ := json.Marshal(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{"PermissionRequest", d}})
	return string(b)
}

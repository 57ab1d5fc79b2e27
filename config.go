package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/hooks"
)

// UseConfig registers what a configuration file asks for: each handler of
// a namespace ([patterns.NAME] or [[patterns.NAME]], in order) as a Pattern
// that runs its command (an Override with override = true), and the
// lifecycle hooks ([hooks.EVENT]) as On handlers. Commands get the command's
// data as JSON on stdin and in RELAY_* variables, never in a shell string.
func (r *Relay) UseConfig(c *config.Config) error {
	env := r.opts.Env
	if env == nil {
		env = os.Environ()
	}
	for _, p := range c.Patterns {
		ns := hooks.NewNamespace(p, env)
		dir := r.opts.Dir
		register := r.Pattern
		if p.Override {
			register = r.Override
		}
		if err := register(p.Name, func(ctx context.Context, m Match) (Result, error) {
			hm := hooks.Match{
				Namespace: m.Namespace, Target: m.Target, Body: m.Body,
				Agent: m.Agent, SessionID: m.SessionID, Workspace: m.Workspace, Cwd: cwd(dir),
				RecentOutput: m.RecentOutput,
			}
			for _, msg := range m.RecentMessages {
				hm.RecentMessages = append(hm.RecentMessages, hooks.RecentMessage(msg))
			}
			out, err := ns.Handle(ctx, hm)
			if err != nil {
				return Result{}, err
			}
			// Block and a stop's reason are told to the agent by the
			// session, in the same words as a Go handler's.
			return Result{Inject: out.Inject, Stop: out.Stop, Block: out.Block, Reason: out.Reason, Neutralize: out.Neutralize}, nil
		}); err != nil {
			return err
		}
	}
	if c.Memory.PromptOnEnd {
		defer r.On(SessionEnd, memoryReminder) // after the SessionEnd hooks
	}
	for _, g := range c.Hooks[config.Idle] {
		// Each group keeps its own schedule.
		set := &hookSet{groups: map[config.Event][]config.HookGroup{config.Idle: {g}}, env: env, dir: r.opts.Dir}
		r.onIdle(g.After, g.Every, g.Max, set.fire)
	}
	for ev, groups := range c.Hooks {
		if len(groups) == 0 || ev == config.Idle {
			continue
		}
		set := &hookSet{groups: map[config.Event][]config.HookGroup{ev: groups}, env: env, dir: r.opts.Dir}
		if err := r.On(Event(string(ev)), set.fire); err != nil {
			return err
		}
	}
	return nil
}

// MemoryReminder is what `[memory] prompt_on_end = true` types in when
// relay stop ends a session.
const MemoryReminder = "This session is about to end. Before it does, save what you learned that the team should keep: write one line per fact, starting with @memory:save, then finish."

// memoryReminder is the SessionEnd handler of [memory] prompt_on_end.
func memoryReminder(_ context.Context, e EventInfo) (Result, error) {
	if !e.Stopping {
		return Result{}, nil
	}
	return Result{Inject: MemoryReminder}, nil
}

func cwd(dir string) string {
	if dir != "" {
		return dir
	}
	wd, _ := os.Getwd()
	return wd
}

// hookSet adapts the lifecycle hooks of one event to an EventFunc. The
// hooks' environment names the session, which is known at the first event.
type hookSet struct {
	groups map[config.Event][]config.HookGroup
	env    []string
	dir    string
	once   sync.Once
	set    *hooks.Set
}

func (h *hookSet) fire(ctx context.Context, e EventInfo) (Result, error) {
	h.once.Do(func() {
		h.set = hooks.NewSet(h.groups, hooks.SetOptions{Env: h.env, Dir: h.dir, Vars: map[string]string{
			"RELAY_AGENT": e.Agent, "RELAY_SESSION_ID": e.SessionID, "RELAY_WORKSPACE": e.Workspace, "RELAY_CWD": cwd(h.dir),
		}})
	})
	sess := hooks.Session{Agent: e.Agent, SessionID: e.SessionID, Workspace: e.Workspace, Cwd: cwd(h.dir),
		RecentOutput: append([]string{}, e.RecentOutput...), RecentMessages: []hooks.RecentMessage{}}
	for _, m := range e.RecentMessages {
		sess.RecentMessages = append(sess.RecentMessages, hooks.RecentMessage(m))
	}
	var subject string
	var payload any
	switch e.Event {
	case SessionStart:
		subject, payload = e.Profile, hooks.SessionStartPayload{Session: sess, Profile: e.Profile, Command: e.Command}
	case SessionEnd:
		subject, payload = fmt.Sprint(e.ExitCode), hooks.SessionEndPayload{Session: sess, ExitCode: e.ExitCode, Reason: "exit"}
		if e.Stopping {
			subject, payload = "stop", hooks.SessionEndPayload{Session: sess, Reason: "stop"}
		}
	case Idle:
		subject, payload = e.Agent, hooks.IdlePayload{Session: sess}
	case MessageReceived:
		subject, payload = e.From, hooks.MessagePayload{Session: sess, ID: e.ID, From: e.From, To: e.To, Message: e.Body, Thread: e.Thread}
	case MessageSent:
		subject, payload = e.To, hooks.MessagePayload{Session: sess, ID: e.ID, From: e.From, To: e.To, Message: e.Body, Thread: e.Thread}
	case Output:
		subject, payload = e.Line, hooks.OutputPayload{Session: sess, Line: e.Line}
	case Blocked:
		var input any
		if len(e.ToolInput) > 0 {
			input = json.RawMessage(e.ToolInput)
		}
		subject, payload = e.Tool, hooks.BlockedPayload{Session: sess, Tool: e.Tool, Input: input, Detail: e.Body}
	case ToolCall, BeforeToolCall:
		var input any
		if len(e.ToolInput) > 0 {
			input = json.RawMessage(e.ToolInput)
		}
		subject, payload = e.Tool, hooks.ToolCallPayload{Session: sess, Tool: e.Tool, Input: input}
	default:
		subject, payload = "", sess
	}
	res, err := h.set.Fire(ctx, string(e.Event), subject, payload)
	out := Result{Stop: res.Stopped, Block: res.Blocked, Reason: res.Reason, Hold: res.Hold, Message: res.Message, Neutralize: res.Neutralize}
	for _, in := range res.Inject {
		if out.Inject != "" {
			out.Inject += "\n"
		}
		out.Inject += in
	}
	if res.Stopped && !res.Blocked && strings.TrimSpace(res.Reason) != "" {
		// {"continue": false, "stopReason": "…"}: the reason is for the
		// agent to read, as Claude Code shows it.
		if out.Inject != "" {
			out.Inject += "\n"
		}
		out.Inject += fmt.Sprintf("The %s hook stopped: %s", e.Event, strings.TrimSpace(res.Reason))
	}
	return out, err
}

package relay

import (
	"context"
	"path/filepath"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/agents/registry"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/session"
)

// ErrNameTaken is returned by Wrap when a live agent of the workspace
// already has the name that was asked for.
var ErrNameTaken = bus.ErrNameTaken

// ErrNoHub is returned by Wrap when no hub runs for Options.Home and none
// could be started, neither detached (no relay binary) nor inside this
// program; its message names the fix.
var ErrNoHub = session.ErrNoHub

// ErrCommandNotFound is returned by Wrap when the command is not an
// executable file (in the child's PATH): nothing was started.
var ErrCommandNotFound = session.ErrCommandNotFound

// NoHub is the Options.Hub value that runs the agent alone, without a
// team: the wrapper, screen reading and handlers work; nothing is sent.
const NoHub = config.NoHub

// Wrap runs the command as this relay's agent until it exits and returns
// its exit code (128+n when signal n killed it). The agent joins the team
// while it runs: what it writes is routed, what its peers send is typed in.
// When no hub can be reached the agent runs all the same, and relay keeps
// trying; what it sends meanwhile waits. With Options.Hub empty and no hub
// running for Options.Home, Wrap starts one first (see Options.Executable);
// when none can be started it returns an error wrapping ErrNoHub that
// names the fix. The agent's own relay commands act as the agent (see
// docs/security.md).
func (r *Relay) Wrap(ctx context.Context, command string, args ...string) (int, error) {
	prof, err := registry.For(r.opts.Profile, command)
	if err != nil {
		return 0, err
	}
	if r.opts.IdleQuiet > 0 {
		prof.Cues.QuietTime = r.opts.IdleQuiet
	}
	o := r.opts
	name := o.Name
	if name == "" {
		name = bus.SafeName(filepath.Base(command), "agent")
	}
	cfg := session.Config{
		Name: name, AutoName: o.Name == "",
		Workspace: o.Workspace, Home: o.Home, Hub: o.Hub,
		Token: o.Token, Creds: o.Creds, TLSCA: o.TLSCA, Executable: o.Executable,
		Delivery: o.Delivery, HumanQuiet: o.HumanQuiet, IdleQuiet: o.IdleQuiet,
		MaxBodyBytes: o.MaxBodyBytes, StuckAfter: o.StuckAfter, Damping: o.Damping, NoPrimer: o.NoPrimer, Prompt: o.Prompt, NoMCP: o.NoMCP,
		MemoryAtStart: o.MemoryAtStart, Memory: o.Memory, Stdin: o.Stdin, Stdout: o.Stdout,
		Env: o.Env, Dir: o.Dir, Logger: o.Logger,
		Profile: prof, Command: command, Args: args,
		Events: r.sessionEvents,
		Idle:   r.sessionIdle,
	}
	for _, p := range r.userPatterns() {
		h := p.h
		cfg.Patterns = append(cfg.Patterns, session.Pattern{Namespace: p.ns, Override: p.override, Handle: h})
	}
	return session.Run(ctx, cfg)
}

// sessionEvents adapts the handlers of an event to the session's types.
func (r *Relay) sessionEvents(ev session.Event) []session.EventFunc {
	hs := r.eventHandlers(Event(ev))
	out := make([]session.EventFunc, len(hs))
	for i, h := range hs {
		out[i] = func(ctx context.Context, e session.EventInfo) (Result, error) {
			return h(ctx, eventInfo(e))
		}
	}
	return out
}

// sessionIdle adapts the Idle handlers and their schedules.
func (r *Relay) sessionIdle() []session.IdleHandler {
	r.mu.Lock()
	hs := append([]idleHandler(nil), r.idle...)
	r.mu.Unlock()
	out := make([]session.IdleHandler, len(hs))
	for i, ih := range hs {
		h := ih.h
		out[i] = session.IdleHandler{After: ih.after, Every: ih.every, Max: ih.max,
			Handle: func(ctx context.Context, e session.EventInfo) (Result, error) {
				return h(ctx, eventInfo(e))
			}}
	}
	return out
}

func eventInfo(e session.EventInfo) EventInfo {
	return EventInfo{
		RecentOutput: e.RecentOutput, RecentMessages: e.RecentMessages,
		Event: Event(e.Event), Agent: e.Agent, SessionID: e.SessionID, Workspace: e.Workspace,
		Profile: e.Profile, Command: e.Command,
		ID: e.ID, From: e.From, To: e.To, Body: e.Body, Thread: e.Thread,
		ExitCode: e.ExitCode, Stopping: e.Stopping, Tool: e.Tool, ToolInput: e.ToolInput, Line: e.Line,
	}
}

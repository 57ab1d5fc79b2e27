package claude

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/statedir"
)

// LateRead is when, after a Stop, the transcript is read once more: Claude
// Code writes a turn's last records after its Stop hooks.
const LateRead = time.Second

// hooksDue is how long after start Claude Code's first hook should have
// arrived; past it, relay says once that they have not.
const hooksDue = 30 * time.Second

// holdDue is how long a command the screen showed waits for a hook to say
// that the exact text gives it. Claude Code runs each hook with a time
// limit, and on a loaded machine relay's hook process may be killed before
// it reaches the wrapper (a lost SessionStart) or reach it seconds late (a
// SessionStart took 7.7 s against its 5 s limit), so the screen may show a
// reply before any hook arrived. Past holdDue with still no hook, the
// screen gives the commands for the rest of the session.
const holdDue = 15 * time.Second

// hookState is where the hooks stand.
type hookState int

const (
	hooksPending hookState = iota // none arrived yet: the screen's commands wait
	hooksOn                       // they give the commands: the screen is a copy
	hooksOff                      // none came in time, or the socket stopped: the screen gives them
)

// hooks is the exact path for Claude Code: its hooks run `relay hook
// EVENT`, which reaches this wrapper over a private socket. They hand over
// the exact text of every reply (so commands are read from the markdown,
// not the screen), the turn boundaries (busy at a prompt, idle at Stop,
// waiting at a permission request) and, at Stop, a way to give the model
// pending messages without touching the input box. Claude Code may run
// several hooks at once: each arrives on its own connection, so what they
// share is under mu.
type hooks struct {
	srv   *hookrpc.Server
	steer bool
	log   interface {
		Info(string, ...any)
		Warn(string, ...any)
	}

	due   time.Duration // how long screen commands wait for a hook (0: holdDue)
	quiet time.Duration // how long a busy turn may go without a hook (0: turnQuiet)
	beat  chan struct{} // a hook arrived (quiet.go)

	mu     sync.Mutex
	state  hookState
	held   []patterns.Command // the screen's commands while pending
	reader *TranscriptReader  // from the first hook on
	blocks int                // Stops blocked in a row
	asks   []*asking          // PermissionRequest hooks waiting for an answer, oldest first
	sink   agents.Sink        // its hooks, and Commands for what it held
	ctx    context.Context    // Run's: outlives each hook's exchange
	// busy: the last turn the hooks reported was busy; screenTurns: the
	// quiet watch handed the turns to the screen (quiet.go).
	busy, screenTurns bool
}

// startHooks listens for Claude Code's hooks and returns the flags and
// environment that make Claude Code call them.
func startHooks(l agents.Launch) (agents.Setup, error) {
	if l.RelayBinary == "" {
		return agents.Setup{}, fmt.Errorf("no relay binary for Claude Code's hooks")
	}
	var extra []string
	if l.BeforeToolCall {
		extra = append(extra, "PreToolUse")
	}
	mcpArgs, allow := mcpSetup(l)
	settings, err := SettingsAllowing(l.RelayBinary, allow, extra...)
	if err != nil {
		return agents.Setup{}, err
	}
	dir, err := statedir.EnsureSub(l.Home, "run")
	if err != nil {
		return agents.Setup{}, fmt.Errorf("hook socket folder: %w", err)
	}
	srv, err := hookrpc.Listen(dir)
	if err != nil {
		return agents.Setup{}, fmt.Errorf("hook socket: %w", err)
	}
	h := &hooks{srv: srv, steer: l.Steer, log: l.Log, beat: make(chan struct{}, 1)}
	srv.ErrorLog = func(err error) { l.Log.Warn("hook", "err", err) }
	return agents.Setup{
		Args:   append([]string{"--settings", settings}, mcpArgs...),
		Env:    []string{hookrpc.SocketEnv + "=" + srv.Path()},
		Source: h,
	}, nil
}

// Run answers the hooks until ctx ends.
func (h *hooks) Run(ctx context.Context, sink agents.Sink) error {
	defer h.srv.Close()
	h.mu.Lock()
	h.sink, h.ctx = sink, ctx
	h.mu.Unlock()
	sink.Go(func() {
		select {
		case <-time.After(hooksDue):
			h.mu.Lock()
			pending := h.state == hooksPending
			h.mu.Unlock()
			if pending {
				h.log.Warn("Claude Code's hooks have not arrived yet; commands its screen shows wait for them", "up to", h.holdDue())
			}
		case <-ctx.Done():
		}
	})
	h.mu.Lock()
	if len(h.held) > 0 {
		h.awaitHeldLocked()
	}
	h.mu.Unlock()
	sink.Go(func() { h.watchQuiet(ctx, sink) })
	if err := h.srv.Serve(ctx, h.handle); err != nil && ctx.Err() == nil {
		h.log.Warn("hook socket stopped; reading the screen only", "err", err)
		h.mu.Lock()
		h.state = hooksOff
		h.mu.Unlock()
		sink.Turn(agents.Turn{Exact: false})
		return err
	}
	return nil
}

// Screen drops the screen's commands once a hook arrived (the exact text
// gives them) and holds them until one does: fired at once, a command
// would fire again from the Stop hook of a session whose first hooks were
// late or lost. If no hook comes within holdDue, they are handed back and
// the screen gives the commands from then on.
func (h *hooks) Screen(c patterns.Command) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.state {
	case hooksPending:
		h.held = append(h.held, c)
		if len(h.held) == 1 && h.sink != nil {
			h.awaitHeldLocked()
		}
		return true
	case hooksOn:
		return true
	}
	return false
}

// awaitHeldLocked gives up on the hooks holdDue from now unless one has
// arrived. h.mu is held, and h.sink and h.ctx are set.
func (h *hooks) awaitHeldLocked() {
	ctx, due := h.ctx, h.holdDue()
	h.sink.Go(func() {
		select {
		case <-time.After(due):
			h.giveUp()
		case <-ctx.Done():
		}
	})
}

func (h *hooks) holdDue() time.Duration {
	if h.due > 0 {
		return h.due
	}
	return holdDue
}

// giveUp makes the screen the source, if no hook has arrived, and hands
// back the commands it held.
func (h *hooks) giveUp() {
	h.mu.Lock()
	if h.state != hooksPending {
		h.mu.Unlock()
		return
	}
	h.state = hooksOff
	held, sink := h.held, h.sink
	h.held = nil
	h.mu.Unlock()
	h.log.Warn("Claude Code's hooks never arrived; reading its screen only", "after", h.holdDue())
	if len(held) > 0 {
		sink.Commands(held)
	}
}

// Active reports whether the hooks give the commands.
func (h *hooks) Active() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state == hooksOn
}

// arrive notes that a hook arrived: any hook, not only SessionStart, which
// Claude Code may have killed before it reached relay, makes the hooks the
// source (the screen's held commands are copies of what the exact text
// gives) and opens the transcript reader if none is open: at the
// transcript's end, since at a turn's first hook (UserPromptSubmit) its
// replies are still to come; a turn whose first hook is its Stop gets its
// last message from the payload. Hooks that arrive after relay gave up on
// them report turns only: the screen gave that turn's commands.
func (h *hooks) arrive(ev Hook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == hooksOff {
		return
	}
	if h.state == hooksPending {
		h.state, h.held = hooksOn, nil
		h.log.Info("Claude Code hooks arrive: commands come from its exact text, not the screen", "first", ev.HookEventName)
	}
	if h.reader == nil && ev.HookEventName != "SessionStart" && ev.TranscriptPath != "" {
		if r, err := NewTranscriptReader(ev.TranscriptPath); err == nil {
			h.reader = r
		} else {
			h.log.Warn("transcript", "path", ev.TranscriptPath, "err", err)
		}
	}
}

func (h *hooks) handle(ctx context.Context, req hookrpc.Request) hookrpc.Response {
	ev, err := ParseHook(req.Payload)
	if err != nil {
		h.log.Warn("hook payload", "event", req.Event, "err", err)
		return hookrpc.Response{}
	}
	h.arrive(ev)
	h.heard()
	h.mu.Lock()
	sink := h.sink
	h.mu.Unlock()
	switch req.Event {
	case "SessionStart":
		h.mu.Lock()
		if h.reader == nil || ev.Source != "startup" {
			if r, err := NewTranscriptReader(ev.TranscriptPath); err == nil {
				h.reader = r
			} else {
				h.log.Warn("transcript", "path", ev.TranscriptPath, "err", err)
			}
		}
		h.mu.Unlock()
		h.report(sink, agents.Turn{Exact: true})
	case "UserPromptSubmit":
		h.mu.Lock()
		h.blocks = 0
		if h.reader != nil {
			h.reader.Turn()
		}
		h.mu.Unlock()
		h.report(sink, h.turn())
		sink.Prompted([]string{ev.Prompt})
	case "PostToolUse":
		h.mu.Lock()
		if h.reader != nil {
			h.reader.Await(ev.ToolUseID)
		}
		h.mu.Unlock()
		h.read(nil)
		h.report(sink, h.turn())
		sink.ToolCall(ctx, ev.ToolName, ev.ToolInput)
		if h.steer {
			// Steer: what waits rides on the tool's result, mid-turn.
			if resp, ok := h.give(func(text string) string { return AdditionalContext("PostToolUse", text) }); ok {
				return resp
			}
		}
	case "PreToolUse":
		// The session's BeforeToolCall handlers may refuse the call (the
		// reason reaches the model) or add context beside it.
		h.report(sink, h.turn())
		if out := PreToolUseAnswer(sink.BeforeToolCall(ctx, ev.ToolName, ev.ToolInput)); out != "" {
			return hookrpc.Response{Stdout: out}
		}
	case "PermissionRequest":
		return h.permission(ctx, ev)
	case "Notification":
		// permission_prompt comes seconds after PermissionRequest, and
		// only says again what that said; after the human answered it
		// must not bring the wait back.
		if ev.NotificationType == "permission_prompt" && h.waiting() {
			h.report(sink, h.turn())
		}
	case "Stop":
		h.Dismiss() // no dialog outlives its turn
		h.read(&ev)
		h.mu.Lock()
		if ev.StopHookActive {
			h.blocks++
		} else {
			h.blocks = 0
		}
		blocks, runCtx := h.blocks, h.ctx
		h.mu.Unlock()
		if blocks < StopBlockCap-1 {
			// Claude Code caps consecutive blocks; past that, typing
			// takes over.
			if resp, ok := h.give(StopBlock); ok {
				return resp
			}
		}
		h.report(sink, agents.Turn{Exact: true})
		// The late read waits on Run's context, not the hook's: the hook's
		// exchange ends as soon as this answer is written.
		sink.Go(func() {
			select {
			case <-time.After(LateRead):
				h.read(nil)
			case <-runCtx.Done():
			}
		})
	}
	return hookrpc.Response{}
}

// read hands over the assistant texts written since the last read (at
// Stop, with the reply's last message from the payload).
func (h *hooks) read(stop *Hook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == hooksOff {
		return // the screen gives the commands
	}
	if h.reader == nil {
		if stop != nil && strings.TrimSpace(stop.LastAssistantMessage) != "" {
			h.sink.Texts([]string{stop.LastAssistantMessage})
		}
		return
	}
	var texts []string
	var err error
	if stop != nil {
		texts, err = h.reader.Stop(*stop)
	} else {
		texts, err = h.reader.Next()
	}
	if err != nil {
		h.log.Warn("transcript", "err", err)
	}
	if len(texts) > 0 {
		h.sink.Texts(texts)
	}
}

// give hands what waits to the model as a hook's answer made by answer;
// false when nothing waits.
func (h *hooks) give(answer func(string) string) (hookrpc.Response, bool) {
	text, done, ok := h.sink.HandOver()
	if !ok {
		return hookrpc.Response{}, false
	}
	sink := h.sink
	return hookrpc.Response{
		Stdout: answer(text),
		Sent: func(err error) {
			if err != nil {
				h.log.Warn("Stop hook hand-over failed; typing instead", "err", err)
				done(err)
				h.report(sink, agents.Turn{Exact: true})
				return
			}
			done(nil)
		},
	}, true
}

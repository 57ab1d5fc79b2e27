package relay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/relayhq/relay/agents"
	"github.com/relayhq/relay/delivery"
	"github.com/relayhq/relay/hookrpc"
	"github.com/relayhq/relay/patterns"
)

// lateTexts is when, after a Stop, the transcript is read once more: Claude
// Code writes a turn's last records after its Stop hooks.
const lateTexts = time.Second

// claudeHooks is the exact path for Claude Code: its hooks run `relay hook
// EVENT`, which reaches this wrapper over a private socket. They hand over
// the exact text of every reply (so commands are read from the markdown,
// not the screen), the turn boundaries (busy at a prompt, idle at Stop,
// waiting at a permission request) and, at Stop, a way to give the model
// pending messages without touching the input box.
type claudeHooks struct {
	s      *session
	srv    *hookrpc.Server
	reader *agents.TranscriptReader // from SessionStart on
	blocks int                      // Stops blocked in a row
}

// hookBinary is the relay binary that Claude Code's hooks run: this program
// when it is relay, else relay on PATH; "" when there is none (then the
// screen path does all).
func (s *session) hookBinary() string {
	if exe := s.o.Executable; exe != "" && strings.HasPrefix(filepath.Base(exe), "relay") {
		return exe
	}
	if p, err := exec.LookPath("relay"); err == nil {
		return p
	}
	return ""
}

// startClaudeHooks listens for Claude Code's hooks and returns the flags and
// environment that make Claude Code call them; nil when the hook path is not
// available (the screen path then does all, and the log says why once).
func (s *session) startClaudeHooks() (args, env []string) {
	bin := s.hookBinary()
	if bin == "" {
		s.log.Warn("no relay binary for Claude Code's hooks; reading the screen only")
		return nil, nil
	}
	settings, err := agents.ClaudeSettings(bin)
	if err != nil {
		s.log.Warn("Claude Code hook settings", "err", err)
		return nil, nil
	}
	dir := filepath.Join(s.o.Home, "run")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		s.log.Warn("hook socket folder", "err", err)
		return nil, nil
	}
	srv, err := hookrpc.Listen(dir)
	if err != nil {
		s.log.Warn("hook socket", "err", err)
		return nil, nil
	}
	srv.ErrorLog = func(err error) { s.log.Warn("hook", "err", err) }
	s.hooks = &claudeHooks{s: s, srv: srv}
	return []string{"--settings", settings}, []string{hookrpc.SocketEnv + "=" + srv.Path()}
}

// hooksDue is how long after start Claude Code's first hook should have
// arrived; past it, relay says once that it reads the screen only.
const hooksDue = 30 * time.Second

// serve answers the hooks until ctx ends.
func (h *claudeHooks) serve(ctx context.Context) {
	defer h.srv.Close()
	h.s.ws.Go(func() {
		select {
		case <-time.After(hooksDue):
			if !h.s.hooksActive() {
				h.s.log.Warn("Claude Code's hooks never arrived; reading its screen only")
			}
		case <-ctx.Done():
		}
	})
	if err := h.srv.Serve(ctx, h.handle); err != nil && ctx.Err() == nil {
		h.s.log.Warn("hook socket stopped; reading the screen only", "err", err)
		h.s.setHooksActive(false)
	}
}

func (h *claudeHooks) handle(ctx context.Context, req hookrpc.Request) hookrpc.Response {
	s := h.s
	ev, err := agents.ParseClaudeHook(req.Payload)
	if err != nil {
		s.log.Warn("hook payload", "event", req.Event, "err", err)
		return hookrpc.Response{}
	}
	switch req.Event {
	case "SessionStart":
		if h.reader == nil || ev.Source != "startup" {
			if r, err := agents.NewTranscriptReader(ev.TranscriptPath); err == nil {
				h.reader = r
			} else {
				s.log.Warn("transcript", "path", ev.TranscriptPath, "err", err)
			}
		}
		if !s.hooksActive() {
			s.log.Info("Claude Code hooks arrive: commands come from its exact text, not the screen")
		}
		s.setHooksActive(true)
	case "UserPromptSubmit":
		h.blocks = 0
		s.setHookState(true, false)
		s.prompted(ev.Prompt)
	case "PostToolUse":
		h.read(nil)
		s.setHookState(true, false)
		s.fire(ctx, EventInfo{Event: ToolCall, Tool: ev.ToolName, ToolInput: ev.ToolInput})
		if s.o.Delivery == delivery.ModeSteer {
			// Steer: what waits rides on the tool's result, mid-turn.
			if resp, ok := h.give(func(text string) string { return agents.AdditionalContext("PostToolUse", text) }); ok {
				return resp
			}
		}
	case "PermissionRequest":
		s.setHookState(true, true)
	case "Notification":
		if ev.NotificationType == "permission_prompt" {
			s.setHookState(true, true)
		}
	case "Stop":
		h.read(&ev)
		if ev.StopHookActive {
			h.blocks++
		} else {
			h.blocks = 0
		}
		if resp, ok := h.handOver(); ok {
			return resp
		}
		s.setHookState(false, false)
		s.ws.Go(func() {
			select {
			case <-time.After(lateTexts):
				h.read(nil)
			case <-ctx.Done():
			}
		})
	}
	return hookrpc.Response{}
}

// read fires the commands of the assistant texts written since the last
// read (at Stop, with the reply's last message from the payload).
func (h *claudeHooks) read(stop *agents.ClaudeHook) {
	if h.reader == nil {
		if stop != nil {
			h.s.fireText(stop.LastAssistantMessage)
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
		h.s.log.Warn("transcript", "err", err)
	}
	for _, t := range texts {
		h.s.fireText(t)
		h.s.outputLines(context.Background(), strings.Split(t, "\n"))
	}
}

// handOver gives the model what waits for it as the Stop hook's answer, so
// that it reaches the model without touching the input box. Claude Code
// caps consecutive blocks; past that, typing takes over.
func (h *claudeHooks) handOver() (hookrpc.Response, bool) {
	if h.blocks >= agents.ClaudeStopBlockCap-1 {
		return hookrpc.Response{}, false
	}
	return h.give(agents.StopBlock)
}

// give hands what waits to the model as a hook's answer made by answer;
// false when nothing waits.
func (h *claudeHooks) give(answer func(string) string) (hookrpc.Response, bool) {
	items := h.s.queue.Take()
	if len(items) == 0 {
		return hookrpc.Response{}, false
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	q := h.s.queue
	return hookrpc.Response{
		Stdout: answer(strings.Join(texts, "\n\n")),
		Sent: func(err error) {
			if err != nil {
				h.s.log.Warn("Stop hook hand-over failed; typing instead", "err", err)
				q.Requeue(items)
				h.s.setHookState(false, false)
				return
			}
			q.Handed(items)
		},
	}, true
}

// fireText extracts the commands of one exact assistant text.
func (s *session) fireText(text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	for _, c := range patterns.ExtractText(text, patterns.Options{Namespaces: s.reg.Namespaces(), Mode: patterns.Markdown}) {
		s.cmds.put(c)
	}
}

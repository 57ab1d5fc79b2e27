package pi

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/patterns"
	"github.com/relayhq/relay/internal/statedir"
)

// Extension is relay's pi extension, loaded with -e: it reports each turn
// and each finished message's exact text over the hook socket, asks before
// every tool call, and gives the model relay's messages with
// pi.sendUserMessage.
//
//go:embed relay-extension.js
var Extension []byte

// ExtensionFile is the extension's name in RELAY_HOME/run.
const ExtensionFile = "pi-relay-extension.js"

// eventsDue is how long after start pi's first event should have arrived;
// past it, relay says once that it reads the screen only.
const eventsDue = 30 * time.Second

// events is pi's exact path: relay's extension calls the wrapper's hook
// socket at session start, agent start and end, each finished user and
// assistant message, each turn's end and each tool call. Each call is a
// connection of its own, awaited by the extension, so they come in order.
type events struct {
	srv   *hookrpc.Server
	steer bool
	log   interface {
		Info(string, ...any)
		Warn(string, ...any)
	}

	mu   sync.Mutex
	on   bool // an event arrived: the extension gives commands and turns
	sink agents.HookSink
}

// exact writes the extension into RELAY_HOME/run and listens for it.
func exact(l agents.Launch) (agents.Setup, error) {
	if hasArg(l.Args, "--no-extensions", "-ne") {
		return agents.Setup{}, fmt.Errorf("pi is started with --no-extensions: relay reads its screen")
	}
	dir, err := statedir.EnsureSub(l.Home, "run")
	if err != nil {
		return agents.Setup{}, fmt.Errorf("pi extension folder: %w", err)
	}
	path := filepath.Join(dir, ExtensionFile)
	if err := writeAtomic(path, Extension); err != nil {
		return agents.Setup{}, fmt.Errorf("pi extension: %w", err)
	}
	srv, err := hookrpc.Listen(dir)
	if err != nil {
		return agents.Setup{}, fmt.Errorf("pi event socket: %w", err)
	}
	e := &events{srv: srv, steer: l.Steer, log: l.Log}
	srv.ErrorLog = func(err error) { l.Log.Warn("pi extension", "err", err) }
	return agents.Setup{
		Args:   []string{"-e", path},
		Env:    []string{hookrpc.SocketEnv + "=" + srv.Path()},
		Source: e,
	}, nil
}

// writeAtomic writes data to path through a temporary file, so a pi
// starting meanwhile never reads half of it.
func writeAtomic(path string, data []byte) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == string(data) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pi-ext-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func hasArg(args []string, names ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, n := range names {
			if a == n {
				return true
			}
		}
	}
	return false
}

// Run answers the extension until ctx ends.
func (e *events) Run(ctx context.Context, sink agents.Sink) error {
	defer e.srv.Close()
	e.mu.Lock()
	e.sink = sink
	e.mu.Unlock()
	sink.Go(func() {
		select {
		case <-time.After(eventsDue):
			if !e.Active() {
				e.log.Warn("pi's extension never called; reading its screen only")
			}
		case <-ctx.Done():
		}
	})
	if err := e.srv.Serve(ctx, e.handle); err != nil && ctx.Err() == nil {
		e.log.Warn("pi event socket stopped; reading the screen only", "err", err)
		e.mu.Lock()
		e.on = false
		e.mu.Unlock()
		sink.Turn(agents.Turn{Exact: false})
		return err
	}
	return nil
}

// Screen drops the screen's commands once the extension calls: the exact
// text gives them.
func (e *events) Screen(patterns.Command) bool { return e.Active() }

// Active reports whether the extension called.
func (e *events) Active() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.on
}

// Idle does nothing: agent_end says when a turn ends.
func (e *events) Idle() {}

// payload is what the extension sends with an event.
type payload struct {
	Role  string          `json:"role"`
	Text  string          `json:"text"`
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
}

// answer is what the extension reads from a response's stdout.
type answer struct {
	Deliver string `json:"deliver,omitempty"`
	As      string `json:"as,omitempty"` // "followUp" or "steer"
	Block   bool   `json:"block,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (e *events) handle(ctx context.Context, req hookrpc.Request) hookrpc.Response {
	var p payload
	if len(req.Payload) > 0 {
		if err := json.Unmarshal(req.Payload, &p); err != nil {
			e.log.Warn("pi event payload", "event", req.Event, "err", err)
			return hookrpc.Response{}
		}
	}
	e.mu.Lock()
	sink, was := e.sink, e.on
	e.on = true
	e.mu.Unlock()
	if !was {
		e.log.Info("pi's extension calls: commands come from its exact text, not the screen")
	}
	switch req.Event {
	case "pi:session_start":
		// Not a turn: pi reads its input only once its TUI is up, which
		// the window title tells (Profile.ReadyTitle).
	case "pi:agent_start":
		sink.Turn(agents.Turn{Exact: true, Busy: true})
	case "pi:message_end":
		switch {
		case p.Role == "assistant" && strings.TrimSpace(p.Text) != "":
			sink.Texts([]string{p.Text})
		case p.Role == "user" && strings.TrimSpace(p.Text) != "":
			sink.Prompted([]string{p.Text})
		}
	case "pi:turn_end":
		if e.steer {
			// Steer: what waits reaches the model before its next call.
			return e.give("steer")
		}
	case "pi:tool_call":
		sink.Turn(agents.Turn{Exact: true, Busy: true})
		v := sink.BeforeToolCall(ctx, p.Tool, p.Input)
		if v.Block {
			reason := v.Reason
			if reason == "" {
				reason = "blocked by relay"
			}
			return reply(answer{Block: true, Reason: reason})
		}
	case "pi:tool_result":
		sink.ToolCall(ctx, p.Tool, p.Input)
	case "pi:agent_end":
		if resp := e.give("followUp"); resp.Stdout != "" {
			return resp // the next turn starts at once: still busy
		}
		sink.Turn(agents.Turn{Exact: true})
	}
	return hookrpc.Response{}
}

// give hands what waits to the model through pi.sendUserMessage; an empty
// response when nothing waits.
func (e *events) give(as string) hookrpc.Response {
	e.mu.Lock()
	sink := e.sink
	e.mu.Unlock()
	text, done, ok := sink.HandOver()
	if !ok {
		return hookrpc.Response{}
	}
	resp := reply(answer{Deliver: text, As: as})
	resp.Sent = func(err error) {
		if err != nil {
			e.log.Warn("pi hand-over failed; typing instead", "err", err)
			done(err)
			sink.Turn(agents.Turn{Exact: true})
			return
		}
		done(nil)
	}
	return resp
}

func reply(a answer) hookrpc.Response {
	b, _ := json.Marshal(a)
	return hookrpc.Response{Stdout: string(b)}
}

package opencode

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/hookrpc"
	"github.com/relayhq/relay/internal/statedir"
)

// Plugin is relay's OpenCode plugin: before each tool call it asks the
// wrapper over the hook socket (tool.execute.before, which OpenCode runs
// before its own permission check) and throws the reason of a refusal,
// which OpenCode gives the model as the tool's error; after each call
// (tool.execute.after) it reports it.
//
//go:embed relay-plugin.js
var Plugin []byte

// PluginFile is the plugin's name in RELAY_HOME/run.
const PluginFile = "opencode-relay-plugin.js"

// hooks is the session's plugin: its file, named in the configuration
// overlay, and the socket that answers it. It rides beside the database
// reader, which still gives the exact text and turns.
type hooks struct {
	agents.Source // the database follower
	srv           *hookrpc.Server
	log           interface{ Warn(string, ...any) }

	mu   sync.Mutex
	sink agents.Sink
}

// pluginSetup writes the plugin into RELAY_HOME/run and listens for it;
// it returns the plugin's file and the socket's variable.
func pluginSetup(l agents.Launch) (path string, srv *hookrpc.Server, err error) {
	dir, err := statedir.EnsureSub(l.Home, "run")
	if err != nil {
		return "", nil, fmt.Errorf("opencode plugin folder: %w", err)
	}
	path = filepath.Join(dir, PluginFile)
	if err := writeAtomic(path, Plugin); err != nil {
		return "", nil, fmt.Errorf("opencode plugin: %w", err)
	}
	if srv, err = hookrpc.Listen(dir); err != nil {
		return "", nil, fmt.Errorf("opencode plugin socket: %w", err)
	}
	return path, srv, nil
}

// Run answers the plugin while the database follower runs.
func (h *hooks) Run(ctx context.Context, sink agents.Sink) error {
	defer h.srv.Close()
	h.mu.Lock()
	h.sink = sink
	h.mu.Unlock()
	sink.Go(func() {
		if err := h.srv.Serve(ctx, h.handle); err != nil && ctx.Err() == nil {
			h.log.Warn("plugin socket stopped; BeforeToolCall handlers no longer see OpenCode's tool calls", "err", err)
		}
	})
	return h.Source.Run(ctx, sink)
}

// toolEvent is what the plugin sends with an event.
type toolEvent struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
}

// verdict is what the plugin reads from a response's stdout.
type verdict struct {
	Block  bool   `json:"block,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func (h *hooks) handle(ctx context.Context, req hookrpc.Request) hookrpc.Response {
	var ev toolEvent
	if err := json.Unmarshal(req.Payload, &ev); err != nil {
		h.log.Warn("opencode plugin payload", "event", req.Event, "err", err)
		return hookrpc.Response{}
	}
	h.mu.Lock()
	sink := h.sink
	h.mu.Unlock()
	switch req.Event {
	case "opencode:tool.execute.before":
		if v := sink.BeforeToolCall(ctx, ev.Tool, ev.Input); v.Block {
			reason := v.Reason
			if reason == "" {
				reason = "refused by a BeforeToolCall hook"
			}
			if v.Context != "" { // no other way to the model
				reason += "\n\n" + v.Context
			}
			b, _ := json.Marshal(verdict{Block: true, Reason: reason})
			return hookrpc.Response{Stdout: string(b)}
		}
	case "opencode:tool.execute.after":
		sink.ToolCall(ctx, ev.Tool, ev.Input)
	}
	return hookrpc.Response{}
}

// writeAtomic writes data to path through a temporary file, so an
// OpenCode starting meanwhile never reads half of it.
func writeAtomic(path string, data []byte) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == string(data) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".opencode-plugin-*")
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

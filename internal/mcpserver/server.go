// Package mcpserver is `relay mcp`: the team as Model Context Protocol
// tools, served over stdio with the official Go SDK. An MCP client (an
// agent CLI, an editor, a script) gets the same bus, memory and user
// namespaces that `@relay:` lines reach, under the same rules:
//
//	MCP client ─► tools/call ─► send ─► loop damper ─► bus (stored, receipts)
//	                           agents, inbox, log ─► bus presence and log
//	                           memory_* ─► the hub's memory service
//	                           <namespace> ─► the configured handler (allow list)
//
// Every text a tool returns that came from someone else (a peer's message,
// a memory, a handler's output) is sanitised as text typed into an agent
// is (delivery.Sanitize), because a CLI may show the result on the screen
// that relay reads for commands.
//
// The server acts as one identity, fixed for its life: the wrapped agent
// it runs under, or a person. It connects to the hub on the first call
// that needs it and again after a failure, so that it starts (and lists
// its tools) while the hub is down.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/hub"
	"github.com/relayhq/relay/internal/memory"
)

// ServerName is the name the server gives itself in the MCP handshake, and
// the name relay registers it under in the agent CLIs (Claude Code shows
// its tools as mcp__relay__send).
const ServerName = "relay"

// Bus is what the tools need of a bus client; *bus.Client has it.
type Bus interface {
	SendMessage(ctx context.Context, m bus.Message) (bus.Envelope, error)
	Hold(ctx context.Context, m bus.Message, reason string) (bus.Envelope, error)
	Agents(ctx context.Context) ([]bus.Presence, error)
	Log(ctx context.Context, o bus.LogOptions, fn func(bus.Entry) error) error
	Workspace() string
	Close() error
}

// Team is one connection to the hub: the bus and the memory service on it.
type Team struct {
	Bus    Bus
	Memory memory.API
}

// Options configure a Server. Name and Connect are required.
type Options struct {
	// Name is who the tools act as: the wrapped agent, or a person.
	Name string
	// Agent says Name is a wrapped agent (run by its CLI), not a person;
	// it shows in the handshake's instructions.
	Agent bool
	// Workspace is the workspace's name, for memories and handlers.
	Workspace string
	// Connect joins the hub as Name. It is called on the first tool call
	// that needs the hub and again after a failure.
	Connect func(ctx context.Context) (Team, error)
	// Damping limits how often this identity may send (as for @relay:
	// lines); the zero value is delivery's defaults.
	Damping delivery.DamperOptions
	// Patterns are the user namespaces, one tool each.
	Patterns []config.Pattern
	// HandlerEnv is the base environment of the namespace handlers (nil:
	// this process's); Dir their working folder when the pattern has none.
	HandlerEnv []string
	Dir        string
	// Version is relay's version, for the handshake.
	Version string
	// Logger logs to the human (stderr), never to the protocol stream.
	Logger *slog.Logger
	// Now is the clock (nil: time.Now), for tests.
	Now func() time.Time
}

// Server is the MCP server of one identity.
type Server struct {
	o      Options
	mcp    *mcp.Server
	damper *delivery.Damper
	tools  []string

	mu   sync.Mutex
	team *Team
}

// New returns a server with every tool registered.
func New(o Options) (*Server, error) {
	if o.Name == "" {
		return nil, fmt.Errorf("mcp server: no name to act as")
	}
	if o.Connect == nil {
		return nil, fmt.Errorf("mcp server: no way to reach the hub")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{o: o, damper: delivery.NewDamper(o.Damping)}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "relay: the team of agents", Version: o.Version},
		&mcp.ServerOptions{Instructions: s.instructions()})
	s.addMessageTools()
	s.addMemoryTools()
	s.addNamespaceTools()
	return s, nil
}

func (s *Server) instructions() string {
	who := "the person " + s.o.Name
	if s.o.Agent {
		who = "the agent " + s.o.Name
	}
	return fmt.Sprintf("relay connects a team of coding agents (workspace %q). These tools act as %s: "+
		"send messages to peers, see who is on the team and what was said, and share memories. "+
		"Messages from peers still arrive as typed text starting with [relay].", s.o.Workspace, who)
}

// Tools names the tools, in the order they were registered.
func (s *Server) Tools() []string { return append([]string(nil), s.tools...) }

// Run serves one client on r and w (the client's stdout and stdin) until
// the client goes away or ctx ends, then closes the hub connection. A line
// that is not a JSON-RPC message is answered with an error and the session
// goes on; at the end of input every call already received is answered
// before Run returns (see stdio.go).
func (s *Server) Run(ctx context.Context, r io.Reader, w io.Writer) error {
	defer s.close()
	t := &stdioTransport{r: r, w: w, logger: s.o.Logger}
	err := s.mcp.Run(ctx, t)
	if err != nil && (errors.Is(err, io.EOF) || ctx.Err() != nil) {
		return nil
	}
	return err
}

// Serve runs the server on a transport (tests use in-memory ones).
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	defer s.close()
	return s.mcp.Run(ctx, t)
}

// connect returns the hub connection, making it when there is none.
func (s *Server) connect(ctx context.Context) (*Team, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.team != nil {
		return s.team, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t, err := s.o.Connect(cctx)
	if err != nil {
		// Tool errors wrap hub.ErrNoHub when the hub cannot be reached.
		if errors.Is(err, hub.ErrNoHub) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", hub.ErrNoHub, err)
	}
	s.team = &t
	return s.team, nil
}

func (s *Server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.team != nil && s.team.Bus != nil {
		s.team.Bus.Close()
	}
	s.team = nil
}

// addTool registers one tool and remembers its name.
func addTool[In any](s *Server, name, desc string, h func(ctx context.Context, in In) (string, error)) {
	s.tools = append(s.tools, name)
	tool := &mcp.Tool{Name: name, Description: desc}
	if readOnly(name) {
		// Clients may run a read-only tool without asking the human.
		tool.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	mcp.AddTool(s.mcp, tool,
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			text, err := h(ctx, in)
			if err != nil {
				s.o.Logger.Warn("tool failed", "tool", name, "err", err)
				return nil, nil, err // a tool error the model reads, not a protocol error
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
}

// readOnly reports whether a tool changes nothing: it only reads the
// team's presence, log or memory.
func readOnly(tool string) bool {
	switch tool {
	case "agents", "inbox", "log", "memory_search", "memory_list":
		return true
	}
	return false
}

package session

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/handler"
	"github.com/relayhq/relay/internal/memory"
)

// Config is everything one session needs. The relay package fills it from
// its Options; zero values are filled there, not here.
type Config struct {
	// Name is the agent's name; AutoName makes a taken one unique
	// (claude-2) instead of refusing it.
	Name     string
	AutoName bool
	// Workspace, Home (RELAY_HOME) and the hub: URL (empty: the one recorded
	// in Home, started if none runs; NoHub: alone), credentials, the CA.
	Workspace, Home       string
	Hub                   string
	Token, Creds, TLSCA   string
	Executable            string // the relay binary that starts a hub and runs hooks
	Delivery              delivery.Mode
	HumanQuiet, IdleQuiet time.Duration
	MaxBodyBytes          int
	StuckAfter            time.Duration // zero: delivery.DefaultStuckAfter
	Damping               delivery.DamperOptions
	NoPrimer              bool
	Prompt                string // typed once when the agent is first ready (relay.Options.Prompt)
	NoMCP                 bool   // do not register relay mcp with the agent's CLI
	MemoryAtStart         int
	Memory                memory.API // @memory: and the primer's memories; nil: the hub's service
	Stdin                 *os.File
	Stdout                io.Writer
	Stderr                io.Writer // where a failure to join is said before the agent starts; nil: os.Stderr
	Env                   []string  // nil: this process's
	Dir                   string    // the child's folder; empty: the current one
	Logger                *slog.Logger
	Profile               agents.Profile
	Command               string
	Args                  []string
	Patterns              []Pattern
	Events                func(Event) []EventFunc // the handlers of an event, in order
	// Idle gives the Idle handlers with their schedules; nil: those of
	// Events(Idle), each once per idle period after DefaultIdleAfter.
	Idle func() []IdleHandler
}

// NoHub is the Config.Hub value that runs the agent alone.
const NoHub = "none"

// Match is one command the agent wrote, as a handler sees it; Result is
// what a handler made of a command or an event (declared once, in
// internal/handler; the relay package documents them).
type (
	Match  = handler.Match
	Result = handler.Result
)

// Pattern is a handler for the commands of one namespace.
type Pattern struct {
	Namespace string
	// Override replaces the built-in handler of a built-in namespace
	// (relay, broadcast, memory) instead of running after it.
	Override bool
	Handle   func(ctx context.Context, m Match) (Result, error)
}

// Event names a point in an agent's life (see the relay package's Event):
// the configuration's lifecycle events, named once there.
type Event = config.Event

// The events a session fires.
const (
	SessionStart    = config.SessionStart
	SessionEnd      = config.SessionEnd
	Idle            = config.Idle
	MessageReceived = config.MessageReceived
	MessageSent     = config.MessageSent
	ToolCall        = config.ToolCall
	BeforeToolCall  = config.BeforeToolCall
	Blocked         = config.Blocked
	Output          = config.Output
)

// EventInfo describes an event for its handlers (see the relay package's
// EventInfo).
type EventInfo struct {
	Event                      Event
	Agent, SessionID           string
	Workspace                  string
	Profile                    string
	Command                    []string
	ID, From, To, Body, Thread string
	ExitCode                   int
	Stopping                   bool // SessionEnd before the agent exits (relay stop)
	Tool                       string
	ToolInput                  []byte
	Line                       string
	// Every event: the agent's last output lines (what it wrote, not
	// what relay or the human typed) and its last messages, oldest first.
	RecentOutput   []string
	RecentMessages []RecentMessage
}

// EventFunc handles an event.
type EventFunc func(ctx context.Context, e EventInfo) (Result, error)

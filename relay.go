// Package relay lets coding agents that were never built to talk to each
// other work as a team. Wrap runs an agent CLI in a pseudo-terminal that the
// human cannot tell apart from their own, reads what the agent writes for
// commands such as
//
//	@relay:Bob Please run the integration tests
//	@broadcast: Deploy freeze at 17:00 UTC
//	@memory:search signing keys
//	@deploy:staging Release v1.2.3
//
// routes messages over NATS to its peers, and types what its peers send
// back into the agent when it can take them.
//
// A Relay is configured once (New), extended with handlers for namespaces
// of one's own (Pattern) and lifecycle events (On), then runs one agent
// (Wrap). The relay command line is built on this API.
package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/handler"
	"github.com/relayhq/relay/internal/patterns"
)

// Options configure a Relay. Home is required; the zero value of every other
// field means its default.
type Options struct {
	// Name is the agent's name in its workspace; empty means one derived
	// from the command (claude, claude-2, ...).
	Name string
	// Workspace is joined; empty means "default".
	Workspace string
	// Profile names the agent CLI's profile (claude, codex, gemini, aider,
	// generic); empty means the one for the command's name.
	Profile string
	// Home is the state folder (RELAY_HOME).
	Home string
	// Hub is a NATS URL; empty means the hub recorded in Home, started if
	// none runs (see Executable); NoHub runs the agent alone.
	Hub string
	// Token and Creds authenticate to a hub given by URL; TLSCA is the PEM
	// file of the CA that signed its TLS certificate, when the system's
	// CAs did not.
	Token, Creds, TLSCA string
	// Executable is the relay binary that starts a detached hub (relay up
	// --detach) when none runs; empty means `relay` on PATH. A program
	// whose name is not relay* is never run for it. With no relay binary at
	// all, the hub runs inside this program while Wrap runs (and Wrap says
	// so on Stdout before the agent starts).
	Executable string
	// Delivery is how messages are typed in (wait, queue, steer).
	Delivery DeliveryMode
	// HumanQuiet is how long the human must not have typed before
	// anything is typed in; zero means 2 s.
	HumanQuiet time.Duration
	// IdleQuiet is how long the agent's screen must be still to count as
	// idle; zero means its profile's choice.
	IdleQuiet time.Duration
	// MaxBodyBytes caps a message body typed into the agent; longer ones
	// are cut with a note on how to read the rest, measured on the text as
	// typed. Zero means delivery.DefaultMaxBody (16 KiB); a plain shell
	// never gets more than its terminal takes on one line.
	MaxBodyBytes int
	// StuckAfter is how long a message may wait to be typed before it is
	// reported stuck (a "stuck" receipt to its sender, the agent shown
	// stuck in its presence); zero means delivery.DefaultStuckAfter (30 s).
	StuckAfter time.Duration
	// Damping bounds how fast this agent may message others.
	Damping Damping
	// NoPrimer leaves the agent's protocol primer out.
	NoPrimer bool
	// Prompt is typed into the agent once, when it is first ready (after
	// the primer), in relay's own words with its commands intact, as a
	// SessionStart hook's answer would be: the role a team file gives it.
	Prompt string
	// NoMCP leaves relay's MCP server (relay mcp, the team as tools) out
	// of the agent CLI's session; by default it is registered where the
	// CLI supports it and a relay binary runs it.
	NoMCP bool
	// MemoryAtStart gives the agent, with its primer, up to this many of
	// the memories most relevant to its project folder; zero gives none.
	MemoryAtStart int
	// Memory, when set, is the memory store the agent's @memory: verbs,
	// Agent.SaveMemory and SearchMemory and the primer's memories use,
	// in this program, instead of the hub's service: a backend of one's
	// own (the seed's "custom"). It must be safe for concurrent use;
	// the hub's memory client, the SQLite store and any implementation of
	// MemoryAPI serve. See docs/memory.md.
	Memory MemoryAPI
	// Stdin and Stdout are the human's terminal; nil means the process's.
	Stdin  *os.File
	Stdout io.Writer
	// Env is the child's environment (RELAY_* variables are added); nil
	// means this process's.
	Env []string
	// Dir is the child's working folder; empty means the current one.
	Dir string
	// Logger receives diagnostics; it must not write to the terminal. Nil
	// discards them.
	Logger *slog.Logger
}

// Match is one command the agent wrote, as a handler sees it:
//
//	Namespace      string    // lower case, without "@" and ":"
//	Target         string    // what follows the colon, up to the first space
//	Body           string
//	Agent          string    // the agent that wrote it
//	SessionID      string
//	Workspace      string
//	RecentOutput   []string  // the agent's last lines, oldest first
//	RecentMessages []Message // the last messages it received or sent, oldest first
//
// RecentOutput is what the agent wrote, never what relay or the human
// typed; both are as EventInfo has them.
type Match = handler.Match

// Result is what a handler made of a command or an event:
//
//	Inject     string  // typed back into the agent, if not empty
//	Stop       bool    // ends the chain: later handlers of the namespace do not run
//	Block      bool    // refuses the message or tool call
//	Reason     string  // why, for Block
//	Hold       bool    // keeps the message in the inbox for later
//	Message    *string // when not nil, replaces the message's text
//	Neutralize bool    // types Inject as a peer's text is typed
//
// Inject is typed with escapes and controls removed and its commands kept,
// unless Neutralize is set. For MessageReceived: Block refuses the message
// (its sender gets a failed receipt with Reason); Hold keeps it in the
// inbox for later; Message, when not nil, replaces its text. For
// BeforeToolCall: Block refuses the tool call, and Reason reaches the
// model. Neutralize types Inject as a peer's text is typed: every
// command-like "@word:" in it is neutralised (＠word:), so that the agent
// cannot fire it by copying it. Set it when Inject passes on text others
// wrote; by default a handler's text is the user's own and keeps its
// commands, so that an agent that follows it to the letter writes a line
// that fires.
type Result = handler.Result

// HandlerFunc handles the commands of one namespace.
type HandlerFunc func(ctx context.Context, m Match) (Result, error)

// Event names a point in an agent's life that handlers can watch.
type Event string

// The events of On (named once, in package config).
const (
	SessionStart Event = Event(config.SessionStart) // the agent started
	// SessionEnd fires when `relay stop` ends the session, before the agent
	// exits (EventInfo.Stopping; a Result's Inject is typed in and relay
	// waits for the turn it starts), or after the agent exited on its own
	// (ExitCode; nothing can be typed any more).
	SessionEnd      Event = Event(config.SessionEnd)
	Idle            Event = Event(config.Idle)            // the agent finished a turn
	MessageReceived Event = Event(config.MessageReceived) // a message is about to be typed in
	MessageSent     Event = Event(config.MessageSent)     // the agent sent a message
	ToolCall        Event = Event(config.ToolCall)        // the agent called a tool (profiles that report it: Claude Code)
	// BeforeToolCall fires before the agent calls a tool, for profiles
	// whose CLI can hold the call (Claude Code): a Result with Block
	// refuses it and its Reason reaches the model; Inject is given to the
	// model beside the call instead of being typed.
	BeforeToolCall Event = Event(config.BeforeToolCall)
	// Blocked fires when a permission prompt starts waiting for the
	// human (profiles that report it: Claude Code): Tool and ToolInput
	// are the call asked for, Body what the human is asked (the command,
	// the file). Answer it with relay approve; handlers only take note.
	Blocked Event = Event(config.Blocked)
	// Output fires for each new line the agent wrote: each line of a reply
	// where the profile gives exact text (Claude Code), else each new line on
	// its screen when it becomes idle.
	Output Event = Event(config.Output)
)

// EventInfo describes an event for its handlers.
type EventInfo struct {
	Event     Event
	Agent     string
	SessionID string
	Workspace string
	// Profile and Command are set for SessionStart.
	Profile string
	Command []string
	// ID, From, To, Body and Thread are set for message events.
	ID, From, To, Body, Thread string
	// ExitCode is set for SessionEnd after the agent exited; Stopping is
	// true for SessionEnd before it exits (relay stop).
	ExitCode int
	Stopping bool
	// Tool and ToolInput are set for ToolCall, BeforeToolCall and Blocked.
	Tool      string
	ToolInput []byte
	// Line is set for Output.
	Line string
	// RecentOutput (the agent's last lines: what it wrote, never what
	// relay or the human typed) and RecentMessages (the last messages it
	// received or sent) are set for every event, oldest first.
	RecentOutput   []string
	RecentMessages []Message
}

// Message is a message an agent received or sent:
//
//	ID, From, To, Body string
//	At                 time.Time
type Message = handler.Message

// EventFunc handles an event; its Result's Inject is typed into the agent.
type EventFunc func(ctx context.Context, e EventInfo) (Result, error)

// Relay is a configured relay, ready to wrap an agent.
type Relay struct {
	opts Options

	mu       sync.Mutex
	patterns []userPattern
	events   map[Event][]EventFunc
	idle     []idleHandler // Idle's, with their schedules
}

// idleHandler is an Idle handler with its schedule (see session.IdleHandler;
// zero values are the defaults: after 30 s, once per idle period).
type idleHandler struct {
	after, every time.Duration
	max          int
	h            EventFunc
}

type userPattern struct {
	ns       string
	h        HandlerFunc
	override bool // replaces the built-in handler of ns (Override)
}

// ErrNoHome is returned by New without Options.Home.
var ErrNoHome = errors.New("relay: Options.Home is required")

// New returns a Relay for opts.
func New(opts Options) (*Relay, error) {
	if opts.Home == "" {
		return nil, ErrNoHome
	}
	if opts.Workspace == "" {
		opts.Workspace = bus.DefaultWorkspace
	}
	if opts.Delivery == "" {
		opts.Delivery = delivery.DefaultMode
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Stdin == nil {
		opts.Stdin = os.Stdin
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	if opts.Name != "" {
		if err := bus.ValidName("agent name", opts.Name); err != nil {
			return nil, fmt.Errorf("relay: %w", err)
		}
	}
	return &Relay{opts: opts, events: map[Event][]EventFunc{}}, nil
}

// Pattern registers h for the commands of namespace ns (@ns:target body).
// Handlers run after the built-in ones, in registration order, until one
// returns Stop; a Result with Block refuses the command (its Reason is told
// to the agent) and ends the chain. For the built-in namespaces relay,
// broadcast and memory, h runs after relay's own handler; Override replaces
// that one. An invalid name or a nil handler is refused (ErrNilHandler).
// A handler that panics is recovered: the agent is told in one line, and
// the session goes on.
func (r *Relay) Pattern(ns string, h HandlerFunc) error {
	ns = strings.ToLower(ns)
	if _, err := patterns.NewNamespaces(ns); err != nil {
		return fmt.Errorf("relay: pattern %q: %w", ns, err)
	}
	if h == nil {
		return fmt.Errorf("relay: pattern %q: %w", ns, ErrNilHandler)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.patterns = append(r.patterns, userPattern{ns: ns, h: h})
	return nil
}

// On registers h for an event. Handlers run in registration order. An
// event that is not one of Events() is refused with an error wrapping
// ErrUnknownEvent (naming the event meant, for "sessionStart" or
// "onSessionStart"), a nil handler with ErrNilHandler: neither would ever
// run as meant. An Idle handler runs once per idle period, after the agent
// has been idle (no output, no typing) for 30 s; what relay types on its
// own never begins a new period. OnIdle takes another schedule.
func (r *Relay) On(ev Event, h EventFunc) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	if h == nil {
		return fmt.Errorf("relay: On(%s): %w", ev, ErrNilHandler)
	}
	if ev == Idle {
		r.onIdle(0, 0, 0, h)
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events[ev] = append(r.events[ev], h)
	return nil
}

// onIdle registers an Idle handler with its schedule.
func (r *Relay) onIdle(after, every time.Duration, max int, h EventFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idle = append(r.idle, idleHandler{after, every, max, h})
}

func (r *Relay) eventHandlers(ev Event) []EventFunc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]EventFunc(nil), r.events[ev]...)
}

func (r *Relay) userPatterns() []userPattern {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]userPattern(nil), r.patterns...)
}

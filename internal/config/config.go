// Package config reads relay's TOML configuration: the user file, the
// project file `.relay/config.toml` and the personal `.relay/config.local.toml`
// beside it, then the environment and flags on top. Load merges them
// (scalar values override, lists of hooks append) and remembers where every
// value came from, so that `relay config show` can say it. Every mistake is
// an *Error naming the file, line, column and key, with a "did you mean"
// for a misspelt key.
//
// The package only reads and checks; running hooks and namespace handlers
// is package hooks' job.
package config

import (
	"fmt"
	"regexp"
	"time"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/scanner"
)

// Config is the merged configuration. Load returns a fresh one; it is not
// changed afterwards and may be shared between goroutines.
type Config struct {
	// Name is this agent's name ("" lets `relay wrap` derive one).
	Name string
	// Workspace groups agents that may talk; messages never cross it.
	Workspace string
	// Hub says which NATS server to use.
	Hub Hub
	// Profile forces an agent profile ("" picks it from the command).
	Profile string
	// MCP registers relay's MCP server (relay mcp) with the agent's CLI
	// for each wrapped session (default true; `mcp = false` turns it off).
	MCP bool
	// Delivery says when incoming messages are typed into the agent.
	Delivery Delivery
	// Damping limits message loops between agents.
	Damping delivery.DamperOptions
	// Memory configures the shared memory store's use at session start.
	Memory Memory
	// Patterns are the user namespaces, in the order they were first
	// defined (user file, then project, then local; by line in each).
	Patterns []Pattern
	// Hooks are the lifecycle hooks by event, each list in merge order:
	// user file, project, local.
	Hooks map[Event][]HookGroup
	// Files are the files Load considered, found or not, in reading order.
	Files []FileInfo

	sources map[string]Source
}

// NoHub is the hub URL that runs an agent alone, without a team (`relay
// wrap --hub none`).
const NoHub = "none"

// Hub is where the NATS server is and how to authenticate to it.
type Hub struct {
	URL       string // NATS URL(s), comma-separated for a cluster; "" finds or starts a local hub
	TokenFile string // a file holding the token (absolute path once loaded)
	Creds     string // a NATS credentials file (absolute path once loaded)
	// TLSCA is a PEM file of the CA that signed a TLS hub's certificate,
	// when the system's CAs did not (absolute path once loaded).
	TLSCA string
}

// DeliveryMode is the delivery package's Mode: when messages are typed into
// a busy agent.
type DeliveryMode = delivery.Mode

// The delivery modes, as package delivery names them.
const (
	// DeliverBatch types everything pending at an idle moment as one
	// injection, within a byte cap (the default).
	DeliverBatch = delivery.ModeBatch
	// DeliverWait types one message at each idle moment.
	DeliverWait = delivery.ModeWait
	// DeliverQueue coalesces pending messages into one injection at the
	// next idle moment ("followUp" is accepted as a synonym).
	DeliverQueue = delivery.ModeQueue
	// DeliverSteer may type a message while the agent works.
	DeliverSteer = delivery.ModeSteer
)

// Delivery configures how incoming messages reach the agent.
type Delivery struct {
	Mode       delivery.Mode
	IdleQuiet  time.Duration // how long the screen must be still to count as idle
	HumanQuiet time.Duration // how long after the human's last key before typing
	// MaxBodyBytes caps what is typed in for one message (header and note
	// included); a longer body is cut with a note naming `relay log --id`,
	// never refused. Into a plain shell, never more than
	// delivery.MaxShellLine.
	MaxBodyBytes int
	// StuckAfter is how long a message may wait to be typed before it is
	// reported stuck (a "stuck" receipt to its sender, the agent shown
	// stuck by relay agents, doctor and the dashboard).
	StuckAfter time.Duration
}

// Damping configures loop damping: it is the delivery package's
// DamperOptions (at most PairMax attempts from one agent to another per
// PairWindow, at most AgentMax from one agent per AgentWindow, at most
// MaxHops messages in a chain each answering the one before).
type Damping = delivery.DamperOptions

// Memory configures the memory store's part in a session.
type Memory struct {
	// LoadAtStart is how many of the most relevant memories are given to
	// the agent with its primer (0: none).
	LoadAtStart int
	// PromptOnEnd types a reminder to save what was learned with
	// @memory:save when `relay stop` ends the session.
	PromptOnEnd bool
	// Backend is where the hub keeps memories: BackendSQLite (the
	// default) or BackendQdrant.
	Backend string
	// Embedder, when its Provider is set, gives memories vectors for
	// search by meaning (docs/memory.md).
	Embedder Embedder
	// Qdrant is the server of BackendQdrant.
	Qdrant Qdrant
}

// Command is what a hook or handler runs: either an argument vector run
// directly, or a string run by `sh -c`. Neither ever has message text
// spliced in; handlers read it from stdin and the environment.
//
// A relative program path in Argv ("./scripts/deploy.sh") is resolved
// when the file is loaded, from the folder of the file that names it (the
// project root for .relay/config.toml, the file's own folder for the user
// file). A Shell string runs as written, in the handler's working folder.
type Command struct {
	Argv  []string
	Shell string
	At    Source // where the command was configured
}

// String shows the command as it was configured.
func (c Command) String() string {
	if c.Shell != "" {
		return c.Shell
	}
	return fmt.Sprintf("%q", c.Argv)
}

// IsZero reports whether no command is set.
func (c Command) IsZero() bool { return c.Shell == "" && len(c.Argv) == 0 }

// Pattern is a user namespace from `[patterns.NAME]`: `@NAME:target body`
// in an agent's output runs Command.
//
// A namespace may have several handlers ([[patterns.NAME]]): they are
// entries of Config.Patterns with the same Name, run in
// the order of Config.Patterns until one stops the chain.
type Pattern struct {
	Name    string        // the namespace, lower case
	Command Command       // what runs
	Timeout time.Duration // after which the process group is killed
	Allow   []string      // agents that may trigger it; empty or "*": all
	Cwd     string        // working folder (absolute); "" is the agent's
	Inject  bool          // whether stdout is typed back into the agent
	// Override, for a built-in namespace (relay, broadcast, memory),
	// replaces relay's own handler instead of running after it.
	Override bool
	// Key names the handler in `relay config show` and Source:
	// "patterns.deploy" for a namespace's first handler,
	// "patterns.deploy[1]" for its second, and so on.
	Key    string
	Source Source // where the handler was first defined
}

// Allowed reports whether agent may trigger the pattern.
func (p Pattern) Allowed(agent string) bool {
	if len(p.Allow) == 0 {
		return true
	}
	for _, a := range p.Allow {
		if a == agent || a == "*" {
			return true
		}
	}
	return false
}

// HookGroup is one `[[hooks.EVENT]]` entry: the hooks that run when the
// event's subject matches.
type HookGroup struct {
	// Matcher is the regular expression as written ("" or "*" match all).
	Matcher string
	// Re is Matcher compiled: searched anywhere in the line for Output,
	// matched against the whole subject for every other event. Nil matches
	// everything.
	Re     *regexp.Regexp
	Hooks  []Hook
	Source Source
	// Idle only: After is the quiet time (no output, no typing) before
	// the group fires (DefaultIdleAfter); Every, when set, repeats it
	// while the agent stays idle, at most Max times (DefaultIdleMax).
	After, Every time.Duration
	Max          int
}

// Matches reports whether the group applies to subject.
func (g HookGroup) Matches(subject string) bool {
	return g.Re == nil || g.Re.MatchString(subject)
}

// Hook is one `[[hooks.EVENT.hooks]]` entry.
type Hook struct {
	Type    string // always "command"
	Command Command
	Timeout time.Duration
	// Neutralize types the hook's text as a peer's text is typed (every
	// "@word:" neutralised), for a hook that passes on what others
	// wrote; by default its text keeps its commands.
	Neutralize bool
	Source     Source
}

// Event names a lifecycle event.
type Event string

// The lifecycle events. Each hook's subject (what its matcher is tested
// against) is given in brackets.
const (
	SessionStart    Event = "SessionStart"    // the agent started [its profile name]
	SessionEnd      Event = "SessionEnd"      // the agent exited [its exit status]
	Output          Event = "Output"          // a logical line of output [the line]
	Idle            Event = "Idle"            // the agent became idle [its name]
	MessageReceived Event = "MessageReceived" // before a message is typed in [the sender]
	MessageSent     Event = "MessageSent"     // after a message was sent [the target]
	ToolCall        Event = "ToolCall"        // the agent called a tool [the tool's name]
	BeforeToolCall  Event = "BeforeToolCall"  // the agent is about to call a tool; may block it [the tool's name]
	Blocked         Event = "Blocked"         // a permission prompt waits for the human [the tool's name]
)

// Events returns every lifecycle event in documentation order.
func Events() []Event {
	return []Event{SessionStart, SessionEnd, Output, Idle, MessageReceived, MessageSent, BeforeToolCall, ToolCall, Blocked}
}

// ParseEvent returns the event named name, accepting the seed aliases
// (`onSessionStart` for SessionStart, …).
func ParseEvent(name string) (Event, bool) {
	for _, e := range Events() {
		if name == string(e) || name == "on"+string(e) {
			return e, true
		}
	}
	return "", false
}

// Defaults for values not set anywhere. The workspace is bus's, the idle
// quiet the scanner's, those of delivery and damping package delivery's:
// named here under their configuration names, declared there.
const (
	DefaultWorkspace = bus.DefaultWorkspace
	DefaultTimeout   = 60 * time.Second // hooks and handlers
	// DefaultIdleQuiet is what `relay config show` reports when
	// delivery.idle_quiet_ms is not set; relay wrap then leaves the choice
	// to the agent's profile (whose default is the scanner's).
	DefaultIdleQuiet    = scanner.DefaultQuietTime
	DefaultHumanQuiet   = delivery.DefaultHumanQuiet
	DefaultMaxBodyBytes = delivery.DefaultMaxBody
	DefaultStuckAfter   = delivery.DefaultStuckAfter
	DefaultPairWindow   = delivery.DefaultPairWindow
	DefaultPairMax      = delivery.DefaultPairMax
	DefaultAgentWindow  = delivery.DefaultAgentWindow
	DefaultAgentMax     = delivery.DefaultAgentMax
	DefaultMaxHops      = delivery.DefaultMaxHops
	MaxTimeout          = 24 * time.Hour // longer timeouts are refused as mistakes
	// DefaultIdleAfter and DefaultIdleMax are an Idle group's after and
	// max when not set.
	DefaultIdleAfter = 30 * time.Second
	DefaultIdleMax   = 3
)

// Default returns the configuration used when nothing is set: a fresh value
// on every call, built from the packages' own defaults.
func Default() *Config {
	c := &Config{
		Workspace: DefaultWorkspace,
		MCP:       true,
		Delivery: Delivery{
			Mode:         delivery.DefaultMode,
			IdleQuiet:    DefaultIdleQuiet,
			HumanQuiet:   delivery.DefaultHumanQuiet,
			MaxBodyBytes: delivery.DefaultMaxBody,
			StuckAfter:   delivery.DefaultStuckAfter,
		},
		Damping: delivery.DefaultDamperOptions(),
		Memory:  Memory{Backend: BackendSQLite, Qdrant: Qdrant{Collection: DefaultQdrantCollection}},
		Hooks:   map[Event][]HookGroup{},
		sources: map[string]Source{},
	}
	return c
}

// defaultPattern is a pattern before any of its keys is applied.
func defaultPattern(name string, src Source) Pattern {
	return Pattern{Name: name, Timeout: DefaultTimeout, Inject: true, Source: src}
}

// defaultHook is a hook entry before any of its keys is applied.
func defaultHook(src Source) Hook {
	return Hook{Type: "command", Timeout: DefaultTimeout, Source: src}
}

// SourceKind says which layer a value came from.
type SourceKind int

// The layers, lowest precedence first.
const (
	FromDefault SourceKind = iota
	FromFile
	FromEnv
	FromFlag
)

// Source is where one value came from.
type Source struct {
	Kind SourceKind
	File string // FromFile: the file's path
	Line int    // FromFile: the key's line
	Col  int    // FromFile: the key's column
	Name string // FromEnv: the variable; FromFlag: the flag (`--hub`)
}

// String gives the source as `relay config show` prints it: `FILE:LINE`,
// `env RELAY_HUB`, `flag --hub` or `default`.
func (s Source) String() string {
	switch s.Kind {
	case FromFile:
		if s.Line > 0 {
			return fmt.Sprintf("%s:%d", s.File, s.Line)
		}
		return s.File
	case FromEnv:
		return "env " + s.Name
	case FromFlag:
		return "flag " + s.Name
	default:
		return "default"
	}
}

// Source returns where the value of key (as `relay config show` names it,
// e.g. `delivery.mode` or `patterns.deploy.timeout`) came from.
func (c *Config) Source(key string) Source { return c.sources[key] }

// Handlers returns the handlers of namespace name (lower case), in the
// order they run.
func (c *Config) Handlers(name string) []Pattern {
	var out []Pattern
	for _, p := range c.Patterns {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// Pattern returns the first handler of the namespace called name (lower
// case), if any.
func (c *Config) Pattern(name string) (Pattern, bool) {
	for _, p := range c.Patterns {
		if p.Name == name {
			return p, true
		}
	}
	return Pattern{}, false
}

// Scope says which of the configuration files a FileInfo is.
type Scope string

// The file scopes, in reading order.
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeLocal   Scope = "local"
)

// FileInfo is one configuration file Load looked for.
type FileInfo struct {
	Path  string
	Scope Scope
	Found bool
}

package relay

import (
	"io"
	"os"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/memory"
)

// The types Options and UseConfig take, named here: the packages that
// declare them are internal to relay (docs/layout.md), and a program built
// on this package imports it and bus alone.

// DeliveryMode says how waiting messages are typed in (Options.Delivery).
type DeliveryMode = delivery.Mode

// The delivery modes.
const (
	// DeliveryBatch types everything waiting at an idle moment as one
	// prompt (the default).
	DeliveryBatch = delivery.ModeBatch
	// DeliveryWait types one message at each idle moment.
	DeliveryWait = delivery.ModeWait
	// DeliveryQueue types as DeliveryBatch does.
	DeliveryQueue = delivery.ModeQueue
	// DeliverySteer types at once, even while the agent works.
	DeliverySteer = delivery.ModeSteer
)

// Damping bounds how fast agents may message each other
// (Options.Damping); zero values mean the defaults.
type Damping = delivery.DamperOptions

// Config is a merged configuration (relay.toml files), as UseConfig takes
// it.
type Config = config.Config

// LoadConfig reads the configuration as `relay wrap` does when started in
// dir: the user's file, the project's files found upward from dir, and the
// RELAY_* variables of this process. Each error names its file, line and
// column.
func LoadConfig(dir string) (*Config, error) {
	return config.Load(config.Sources{ProjectDir: dir, Env: os.Getenv})
}

// MemoryAPI is a memory store (Options.Memory): the hub's service and the
// SQLite store implement it, and so may a backend of one's own.
type MemoryAPI = memory.API

// Memory is one saved note.
type Memory = memory.Memory

// MemoryScope says who sees a memory.
type MemoryScope = memory.Scope

// The memory scopes.
const (
	MemoryScopeAgent     = memory.ScopeAgent     // the agent that saved it
	MemoryScopeWorkspace = memory.ScopeWorkspace // its workspace (the default)
	MemoryScopeGlobal    = memory.ScopeGlobal    // every workspace
)

// MemoryQuery is a search of MemoryAPI.Search.
type MemoryQuery = memory.Query

// MemoryFilter narrows MemoryAPI.List and MemoryAPI.Search.
type MemoryFilter = memory.Filter

// MemoryResult is one hit of MemoryAPI.Search.
type MemoryResult = memory.Result

// MemoryScores tells how each ranking placed a MemoryResult.
type MemoryScores = memory.Scores

// The errors a MemoryAPI wraps, as the hub's service does.
var (
	ErrMemoryInvalid  = memory.ErrInvalid  // a request it refuses
	ErrMemoryNotFound = memory.ErrNotFound // no memory has the id
)

// ReadMemories reads JSON lines as MemoryAPI.Export writes them.
func ReadMemories(r io.Reader) ([]Memory, error) { return memory.ReadJSONLines(r) }

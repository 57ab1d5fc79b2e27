// Package memory is relay's shared memory: short notes that agents (and
// people, through `relay memory`) save, search and forget, so that what one
// agent learned survives its session and reaches its peers.
//
// A [Store] keeps memories in one SQLite file with an FTS5 full-text index
// (porter stemming, BM25 ranking blended with recency). Several processes may
// open the same file at once: writes take the lock up front (BEGIN IMMEDIATE)
// and wait for each other instead of failing. [Serve] answers the same calls
// over NATS request/reply and [NewClient] makes them, so that agents on any
// machine share one store; both the Store and the Client implement [API].
//
// [Handle] maps the `@memory:` verbs an agent writes (save, search, list,
// forget) onto an API and formats the reply that is typed back into the
// agent; the Format functions do that formatting and cap its length.
//
// Times are kept with millisecond precision. A Store is safe for concurrent
// use; it must be closed with [Store.Close].
package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// ErrNotFound means no memory has the given id.
var ErrNotFound = errors.New("memory not found")

// ErrInvalid means a request was malformed: empty text, an unknown scope, a
// bad id. The error that wraps it says what was wrong.
var ErrInvalid = errors.New("invalid memory request")

// Scope says who sees a memory.
type Scope string

const (
	// ScopeAgent memories are seen only by the agent that saved them (and by
	// people at the CLI), in the workspace they were saved in.
	ScopeAgent Scope = "agent"
	// ScopeWorkspace memories are seen by every agent of their workspace. It
	// is the default.
	ScopeWorkspace Scope = "workspace"
	// ScopeGlobal memories are seen from every workspace.
	ScopeGlobal Scope = "global"
)

// ParseScope checks s and returns it as a Scope; "" gives ScopeWorkspace.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "":
		return ScopeWorkspace, nil
	case ScopeAgent, ScopeWorkspace, ScopeGlobal:
		return Scope(s), nil
	}
	return "", fmt.Errorf("%w: unknown scope %q (want agent, workspace or global)", ErrInvalid, s)
}

// Memory is one saved note.
type Memory struct {
	// ID is short and typeable: 8 characters of lower-case Crockford base32.
	ID   string `json:"id"`
	Text string `json:"text"`
	// Tags are lower-case words without the leading '#', sorted.
	Tags []string `json:"tags,omitempty"`
	// Author is the agent (or person) that saved it.
	Author    string    `json:"author,omitempty"`
	Workspace string    `json:"workspace,omitempty"`
	Scope     Scope     `json:"scope"`
	Created   time.Time `json:"created"`
	// Updated is bumped when the same text is saved again.
	Updated time.Time `json:"updated"`
}

// Filter narrows List and Search. Its zero value matches every memory.
type Filter struct {
	// Workspace, when set, keeps the memories of that workspace and the
	// global ones.
	Workspace string `json:"workspace,omitempty"`
	// Viewer, when set, is the agent asking: agent-scoped memories of other
	// agents are hidden from it. Empty (a person at the CLI) sees them all.
	Viewer string `json:"viewer,omitempty"`
	// Author, when set, keeps only the memories saved by that author.
	Author string `json:"author,omitempty"`
	// Scope, when set, keeps only memories of that scope.
	Scope Scope `json:"scope,omitempty"`
	// Tags keeps only memories that carry all of these tags.
	Tags []string `json:"tags,omitempty"`
	// Limit caps the number returned; 0 means DefaultLimit for Search and
	// DefaultListLimit for List, and it is never more than MaxLimit.
	Limit int `json:"limit,omitempty"`
}

// Query is a full-text search. Text is user input, never FTS5 syntax: see
// docs/memory.md for what it accepts (words, "phrases", prefix*).
type Query struct {
	Text string `json:"text"`
	// Mode is ModeLexical, ModeSemantic or ModeHybrid; empty means
	// hybrid when the store has an embedder, else lexical.
	Mode string `json:"mode,omitempty"`
	Filter
}

// Result is one search hit.
type Result struct {
	Memory
	// Score is higher for better hits: BM25 relevance times a recency factor
	// between 1 and 2 (see docs/memory.md). Zero for an empty query, whose
	// results are simply the newest.
	Score float64 `json:"score"`
	// Snippet is the best fragment of the text with matched words in
	// [brackets]; empty for an empty query.
	Snippet string `json:"snippet,omitempty"`
	// Scores, for semantic and hybrid searches, tells how each ranking
	// placed the memory; Score is then Scores.Fused (hybrid) or
	// Scores.Semantic.
	Scores *Scores `json:"scores,omitempty"`
}

// Scores are a result's places in each ranking of a search by meaning.
// Ranks count from 1; 0 means the ranking did not find the memory.
type Scores struct {
	Lexical      float64 `json:"lexical"` // BM25 × recency, as a lexical search scores
	LexicalRank  int     `json:"lexical_rank"`
	Every        bool    `json:"every_word"` // the memory holds every word of the query
	Semantic     float64 `json:"semantic"`   // cosine similarity of the vectors
	SemanticRank int     `json:"semantic_rank"`
	Fused        float64 `json:"fused,omitempty"` // hybrid: reciprocal rank fusion (docs/memory.md)
}

// Limits on how many memories one call returns.
const (
	DefaultLimit     = 10   // Search results when Filter.Limit is 0
	DefaultListLimit = 20   // List results when Filter.Limit is 0
	MaxLimit         = 1000 // the most any one call returns
)

// API is what the Store and the Client both offer, so that the CLI and the
// wrapper work the same with a local file or with the hub's service.
type API interface {
	// Save stores m, or, when the same text (ignoring case and white space)
	// already exists in the same scope, bumps that memory's Updated time and
	// adds m's tags to it; created says which happened. ID, Created and
	// Updated of m are ignored.
	Save(ctx context.Context, m Memory) (saved Memory, created bool, err error)
	// Search ranks memories against q; an empty query lists the newest.
	Search(ctx context.Context, q Query) ([]Result, error)
	// List returns memories newest first.
	List(ctx context.Context, f Filter) ([]Memory, error)
	// Get returns one memory, or ErrNotFound.
	Get(ctx context.Context, id string) (Memory, error)
	// Forget deletes one memory and returns it, or ErrNotFound.
	Forget(ctx context.Context, id string) (Memory, error)
	// Export writes every memory as JSON lines in save order (a re-saved
	// memory counts as saved when it was re-saved).
	Export(ctx context.Context, w io.Writer) error
	// Import reads JSON lines as Export writes them and adds the memories it
	// does not have yet (same id, or same text in the same scope, is
	// skipped). It returns how many were added and skipped.
	Import(ctx context.Context, r io.Reader) (added, skipped int, err error)
}

// DefaultSubjectPrefix is where the hub serves memory: requests go to
// relay._memory.<verb>. The underscore keeps it apart from the workspaces'
// subjects (relay.<workspace>.…), whose names start with a letter or digit.
const DefaultSubjectPrefix = "relay._memory"

// DefaultPath is the store file inside the state folder home (RELAY_HOME);
// the hub and the CLI's direct fallback both use it.
func DefaultPath(home string) string { return filepath.Join(home, "memory.db") }

func clampLimit(n, def int) int {
	switch {
	case n <= 0:
		return def
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/memory"
)

// Limits of the memory tools, as for @memory: (memory.Handle).
const (
	defaultMemoryN = 10
	maxMemoryN     = 50
)

// MemorySaveInput is the memory_save tool's arguments.
type MemorySaveInput struct {
	Text string   `json:"text" jsonschema:"what to remember, one fact or decision"`
	Tags []string `json:"tags,omitempty" jsonschema:"tags to find it by, without #"`
}

// MemorySearchInput is the memory_search tool's arguments.
type MemorySearchInput struct {
	Query string `json:"query" jsonschema:"words to search for; \"a phrase\" and prefix* work"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many results at most (default 10)"`
}

// MemoryListInput is the memory_list tool's arguments.
type MemoryListInput struct {
	N int `json:"n,omitempty" jsonschema:"how many of the newest memories (default 10)"`
}

// MemoryForgetInput is the memory_forget tool's arguments.
type MemoryForgetInput struct {
	ID string `json:"id" jsonschema:"the memory's id, as search and list show it in brackets"`
}

func (s *Server) addMemoryTools() {
	addTool(s, "memory_save", "Save a memory the whole team can search later (a fact, a decision, a convention).", s.memorySave)
	addTool(s, "memory_search", "Search the team's shared memories.", s.memorySearch)
	addTool(s, "memory_list", "List the team's newest shared memories.", s.memoryList)
	addTool(s, "memory_forget", "Delete one shared memory by its id.", s.memoryForget)
}

// memoryLimit checks a count: 0 is the default, at most maxMemoryN.
func memoryLimit(what string, n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("%s is %d: want 1 or more", what, n)
	case n == 0:
		return defaultMemoryN, nil
	}
	return min(n, maxMemoryN), nil
}

// errMemoryless is a memory tool's error when the hub has no memory
// service.
var errMemoryless = errors.New("the relay hub has no memory service")

func (s *Server) memoryAPI(ctx context.Context) (memory.API, error) {
	t, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	if t.Memory == nil {
		return nil, errMemoryless
	}
	return t.Memory, nil
}

// visible is what this identity may see, as for @memory: (its own
// agent-scoped memories, the workspace's, the global ones).
func (s *Server) visible(limit int) memory.Filter {
	return memory.Filter{Workspace: s.o.Workspace, Viewer: s.o.Name, Limit: limit}
}

func (s *Server) memorySave(ctx context.Context, in MemorySaveInput) (string, error) {
	text, tags := memory.SplitTags(in.Text)
	if text == "" {
		return "", fmt.Errorf("nothing to save: text is empty")
	}
	for _, t := range in.Tags {
		tags = append(tags, strings.TrimPrefix(strings.TrimSpace(t), "#"))
	}
	api, err := s.memoryAPI(ctx)
	if err != nil {
		return "", err
	}
	m, created, err := api.Save(ctx, memory.Memory{Text: text, Tags: memory.NormalizeTags(tags), Author: s.o.Name,
		Workspace: s.o.Workspace, Scope: memory.ScopeWorkspace})
	if err != nil {
		s.drop(err)
		return "", fmt.Errorf("memory save: %w", err)
	}
	return memory.FormatSaved(m, created), nil
}

func (s *Server) memorySearch(ctx context.Context, in MemorySearchInput) (string, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return "", fmt.Errorf("no words to search for")
	}
	n, err := memoryLimit("limit", in.Limit)
	if err != nil {
		return "", err
	}
	api, err := s.memoryAPI(ctx)
	if err != nil {
		return "", err
	}
	rs, err := api.Search(ctx, memory.Query{Text: q, Filter: s.visible(n)})
	if err != nil {
		s.drop(err)
		return "", fmt.Errorf("memory search: %w", err)
	}
	// A memory is any agent's text: shown, never obeyed.
	return delivery.Sanitize(memory.FormatResults(q, rs, s.o.Now())), nil
}

func (s *Server) memoryList(ctx context.Context, in MemoryListInput) (string, error) {
	n, err := memoryLimit("n", in.N)
	if err != nil {
		return "", err
	}
	api, err := s.memoryAPI(ctx)
	if err != nil {
		return "", err
	}
	ms, err := api.List(ctx, s.visible(n))
	if err != nil {
		s.drop(err)
		return "", fmt.Errorf("memory list: %w", err)
	}
	return delivery.Sanitize(memory.FormatList(ms, s.o.Now())), nil
}

func (s *Server) memoryForget(ctx context.Context, in MemoryForgetInput) (string, error) {
	id := strings.TrimSpace(strings.Trim(in.ID, "[]"))
	if id == "" || len(strings.Fields(id)) != 1 {
		return "", fmt.Errorf("want one memory id, as search and list show it in brackets")
	}
	api, err := s.memoryAPI(ctx)
	if err != nil {
		return "", err
	}
	// memory.Handle checks that this identity may see the memory, as for
	// @memory:forget.
	reply, err := memory.Handle(ctx, api, s.o.Name, s.o.Workspace, "forget", id)
	if err != nil {
		return "", fmt.Errorf("%s", reply)
	}
	return delivery.Sanitize(reply), nil
}

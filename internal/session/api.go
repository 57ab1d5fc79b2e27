package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/relayhq/relay/bus"
	"github.com/relayhq/relay/internal/hubdial"
	"github.com/relayhq/relay/internal/memory"
)

// ctxKey is the context key of the session that calls a handler.
type ctxKey struct{}

func withSession(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the session that called the handler whose context
// ctx is, so that the handler can act as its agent (Send, Inject, memory).
func FromContext(ctx context.Context) (*Session, bool) {
	s, ok := ctx.Value(ctxKey{}).(*Session)
	return s, ok
}

// ErrHubAway is returned by what needs the hub (memory from a handler)
// while the session has none, yet or at all.
var ErrHubAway = errors.New("the hub is unreachable")

// Name returns the agent's name.
func (s *Session) Name() string { return s.name() }

// Send sends body to an agent ("*": all) as this agent, as its own
// @relay: line would (in order, retried while the hub is away).
func (s *Session) Send(to, body string) error {
	if to == "" {
		to = bus.Broadcast
	}
	if msg := s.send(bus.Message{To: to, Body: body}); strings.HasPrefix(msg, "Not sent") {
		return errors.New(msg)
	}
	return nil
}

// Inject types text into the agent at its next idle moment, labelled as
// a note from relay (as a handler's Result.Inject is).
func (s *Session) Inject(text string) {
	if strings.TrimSpace(text) != "" {
		s.ownNote(text)
	}
}

// memory returns Config.Memory, else the hub's memory service.
func (s *Session) memory() (memory.API, error) {
	if s.cfg.Memory != nil {
		return s.cfg.Memory, nil
	}
	c := s.link.client.Load()
	if c == nil {
		return nil, ErrHubAway
	}
	return hubdial.Memory(c.Conn()), nil
}

// SaveMemory saves text (with its #tags) to the workspace's memory as
// this agent, as @memory:save does, and returns its id.
func (s *Session) SaveMemory(ctx context.Context, text string) (string, error) {
	api, err := s.memory()
	if err != nil {
		return "", fmt.Errorf("save memory: %w", err)
	}
	body, tags := memory.SplitTags(text)
	m, _, err := api.Save(ctx, memory.Memory{Text: body, Tags: tags, Author: s.name(), Workspace: s.cfg.Workspace, Scope: memory.ScopeWorkspace})
	if err != nil {
		return "", fmt.Errorf("save memory: %w", err)
	}
	return m.ID, nil
}

// SearchMemory returns the texts of up to limit memories that match query
// (0: memory.DefaultLimit), best first, as this agent sees them.
func (s *Session) SearchMemory(ctx context.Context, query string, limit int) ([]string, error) {
	api, err := s.memory()
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	res, err := api.Search(ctx, memory.Query{Text: query, Filter: memory.Filter{Workspace: s.cfg.Workspace, Viewer: s.name(), Limit: limit}})
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Text
	}
	return out, nil
}

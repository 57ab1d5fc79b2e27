package relay

import (
	"context"

	"github.com/relayhq/relay/internal/session"
)

// Agent is the wrapped agent as a handler may act on it: send as it, type
// into it, use the team's memory. AgentFrom returns it from the context a
// Pattern or On handler is called with; it is valid only for the life of
// that call.
type Agent struct{ s *session.Session }

// AgentFrom returns the agent whose handler got ctx; false outside a
// handler.
func AgentFrom(ctx context.Context) (*Agent, bool) {
	s, ok := session.FromContext(ctx)
	if !ok {
		return nil, false
	}
	return &Agent{s}, true
}

// Name returns the agent's name in its workspace.
func (a *Agent) Name() string { return a.s.Name() }

// Send sends body to the agent named to ("*": all) as this agent, as its
// own @relay: line would. While the hub is away the message waits.
func (a *Agent) Send(to, body string) error { return a.s.Send(to, body) }

// Inject types text into the agent at its next idle moment, labelled as a
// note from relay, as a Result's Inject is.
func (a *Agent) Inject(text string) { a.s.Inject(text) }

// SaveMemory saves text (its #tags as tags) to the workspace's shared
// memory as this agent, as @memory:save does, and returns its id.
func (a *Agent) SaveMemory(ctx context.Context, text string) (string, error) {
	return a.s.SaveMemory(ctx, text)
}

// SearchMemory returns the texts of up to limit memories matching query
// (0: 10), best first, as @memory:search finds them for this agent.
func (a *Agent) SearchMemory(ctx context.Context, query string, limit int) ([]string, error) {
	return a.s.SearchMemory(ctx, query, limit)
}

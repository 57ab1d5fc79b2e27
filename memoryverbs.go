package relay

import (
	"context"

	"github.com/relayhq/relay/memory"
	"github.com/relayhq/relay/patterns"
)

// handleMemory answers @memory: commands through the hub's memory service
// and types the reply (or a short notice of what went wrong) back in.
func (s *session) handleMemory(ctx context.Context, c patterns.Command) (patterns.Result, error) {
	cl := s.client.Load()
	if cl == nil {
		return patterns.Result{Inject: "@memory is unavailable: the hub is unreachable."}, nil
	}
	api := memory.NewClient(cl.Conn(), memory.DefaultSubjectPrefix)
	reply, err := memory.Handle(ctx, api, s.name, s.o.Workspace, c.Target, c.Body)
	if err != nil {
		s.log.Warn("memory", "verb", c.Target, "err", err)
	}
	return patterns.Result{Inject: reply}, nil
}

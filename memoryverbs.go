package relay

import (
	"context"

	"github.com/relayhq/relay/patterns"
)

// handleMemory answers @memory: commands through the hub's memory service.
func (s *session) handleMemory(ctx context.Context, c patterns.Command) (patterns.Result, error) {
	return patterns.Result{Inject: "@memory is not available yet."}, nil
}

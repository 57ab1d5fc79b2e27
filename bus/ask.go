package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Ask is a prompt an agent waits on its human for (a tool permission
// dialog), as its wrapper publishes it in its presence: the team's pending
// prompts are the asks of its blocked agents (Approvals).
type Ask struct {
	ID      string          `json:"id"`             // names the prompt: Control.Ask
	Tool    string          `json:"tool,omitempty"` // the tool asked for
	Input   json.RawMessage `json:"input,omitempty"`
	Detail  string          `json:"detail,omitempty"`  // the command, the file, the URL
	Options []string        `json:"options,omitempty"` // the answers relay approve can give
	Since   time.Time       `json:"since"`
}

// SetStateAsk is SetState with the prompt the agent waits on (nil: none),
// which the presence carries while st is StateBlocked.
func (c *Client) SetStateAsk(ctx context.Context, st State, a *Ask) error {
	c.ask.Store(a)
	return c.SetState(ctx, st)
}

// askFor is the ask a presence in state st carries.
func (c *Client) askFor(st State) *Ask {
	if st != StateBlocked {
		return nil
	}
	return c.ask.Load()
}

// Approval is one pending prompt of the team.
type Approval struct {
	Agent string `json:"agent"`
	Ask
}

// Approvals lists the prompts the workspace's live agents wait on, by
// agent name.
func (c *Client) Approvals(ctx context.Context) ([]Approval, error) {
	list, err := c.Agents(ctx)
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	var out []Approval
	for _, p := range list {
		if p.State == StateBlocked && p.Ask != nil {
			out = append(out, Approval{Agent: p.Name, Ask: *p.Ask})
		}
	}
	return out, nil
}

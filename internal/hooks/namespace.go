package hooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/relayhq/relay/internal/config"
)

// Match is one `@namespace:target body` command found in an agent's
// output, with who wrote it.
type Match struct {
	Namespace string // lower case, without @ and :
	Target    string
	Body      string
	Agent     string // the agent whose output held the command
	SessionID string
	Workspace string
	Cwd       string // the agent's working folder
	// RecentOutput is the agent's last lines (what it wrote, never what
	// relay or the human typed) and RecentMessages its last messages
	// received or sent, oldest first, as the lifecycle hooks get them.
	RecentOutput   []string
	RecentMessages []RecentMessage
}

// matchInput is the JSON a namespace handler reads on stdin. The recent
// lists are always there, empty when there is nothing yet.
type matchInput struct {
	Namespace      string          `json:"namespace"`
	Target         string          `json:"target"`
	Body           string          `json:"body"`
	Agent          string          `json:"agent"`
	SessionID      string          `json:"session_id"`
	Workspace      string          `json:"workspace"`
	Cwd            string          `json:"cwd"`
	RecentOutput   []string        `json:"recent_output"`
	RecentMessages []RecentMessage `json:"recent_messages"`
}

// Namespace is the handler of one user namespace, from `[patterns.NAME]`.
// It is safe for concurrent use.
type Namespace struct {
	p   config.Pattern
	env []string
}

// NewNamespace returns the handler for p. env is the base environment of
// its command (nil: relay's own).
func NewNamespace(p config.Pattern, env []string) *Namespace {
	return &Namespace{p: p, env: env}
}

// Name is the namespace handled.
func (n *Namespace) Name() string { return n.p.Name }

// Handle runs the handler for m. An agent not in the pattern's allow list
// is refused (Block, with the reason) without running anything. The
// command runs in the pattern's cwd, else the agent's. With inject = false
// its stdout is dropped; stop and block still count.
func (n *Namespace) Handle(ctx context.Context, m Match) (Outcome, error) {
	if !n.p.Allowed(m.Agent) {
		return Outcome{Block: true, Reason: fmt.Sprintf("only %s may use it, not %s",
			strings.Join(n.p.Allow, ", "), m.Agent)}, nil
	}
	dir := n.p.Cwd
	if dir == "" {
		dir = m.Cwd
	}
	cmd := Command{Argv: n.p.Command.Argv, Shell: n.p.Command.Shell, Dir: dir, Timeout: n.p.Timeout, Env: n.env}
	in := matchInput{Namespace: m.Namespace, Target: m.Target, Body: m.Body, Agent: m.Agent,
		SessionID: m.SessionID, Workspace: m.Workspace, Cwd: m.Cwd,
		RecentOutput:   append([]string{}, m.RecentOutput...),
		RecentMessages: append([]RecentMessage{}, m.RecentMessages...)}
	vars := map[string]string{
		"RELAY_NAMESPACE":  m.Namespace,
		"RELAY_TARGET":     m.Target,
		"RELAY_MESSAGE":    m.Body,
		"RELAY_AGENT":      m.Agent,
		"RELAY_SESSION_ID": m.SessionID,
		"RELAY_WORKSPACE":  m.Workspace,
	}
	out, err := Run(ctx, cmd, in, vars)
	if err != nil {
		// Not wrapped: the caller names the command, and the agent reads
		// one sentence, not a chain of prefixes.
		return out, err
	}
	if !n.p.Inject {
		out.Inject = ""
	}
	return out, nil
}

package session

import (
	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/identity"
)

// mcpServer is `relay mcp` for this session, as the profile registers it
// with its CLI: run by the same relay binary as the hooks, acting as this
// agent. Nil when it is turned off (mcp = false), when the agent runs
// without a hub, or when there is no relay binary to run.
func (s *Session) mcpServer(name string) *agents.MCPServer {
	if s.cfg.NoMCP || s.alone() {
		return nil
	}
	bin := s.relayBinary()
	if bin == "" {
		return nil
	}
	return &agents.MCPServer{
		Command: bin,
		Args:    []string{"mcp"},
		Env: map[string]string{
			"RELAY_NAME":       name,
			"RELAY_WORKSPACE":  s.cfg.Workspace,
			"RELAY_HOME":       s.cfg.Home,
			"RELAY_SESSION_ID": s.spec.sid,
		},
		// Values that may be secret (a token, a URL with a password)
		// pass by name only; the identity file (the agent's own
		// credential) too.
		PassEnv: []string{"RELAY_HUB", "RELAY_TOKEN", "RELAY_CREDS", "RELAY_TLS_CA", identity.FileEnv},
	}
}

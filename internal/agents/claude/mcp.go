package claude

import (
	"encoding/json"
	"fmt"

	"github.com/relayhq/relay/internal/agents"
)

// MCPAllow is the permission rule that lets every tool of relay's MCP
// server run without a dialog: Claude Code names them mcp__relay__TOOL,
// and a rule naming the server alone matches all of its tools.
const MCPAllow = "mcp__" + agents.MCPName

// MCPConfig returns the JSON for `claude --mcp-config=JSON`: relay's MCP
// server for this session only, beside the user's own servers (no file is
// read or written). Claude Code starts it with its own environment, to
// which Env is added; PassEnv needs nothing more.
func MCPConfig(s *agents.MCPServer) (string, error) {
	if s == nil || s.Command == "" {
		return "", fmt.Errorf("claude mcp config: no relay binary to run")
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		agents.MCPName: map[string]any{"type": "stdio", "command": s.Command, "args": s.Args, "env": s.Env},
	}})
	if err != nil {
		return "", fmt.Errorf("claude mcp config: %w", err)
	}
	return string(b), nil
}

// mcpSetup is what registering relay's MCP server adds to the session's
// arguments: the config flag, in its --flag=value form (Claude Code's
// --mcp-config takes several values: a separate value would make it
// swallow the user's prompt that follows), and the rule for the settings.
func mcpSetup(l agents.Launch) (args, allow []string) {
	if l.MCP == nil {
		return nil, nil
	}
	cfg, err := MCPConfig(l.MCP)
	if err != nil {
		l.Log.Warn("relay mcp is not registered", "err", err)
		return nil, nil
	}
	return []string{"--mcp-config=" + cfg}, []string{MCPAllow}
}

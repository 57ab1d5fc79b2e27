package agents

import (
	"maps"
	"slices"
)

// MCPName is the name relay's MCP server is registered under in every
// CLI: Claude Code shows its tools as mcp__relay__send.
const MCPName = "relay"

// MCPServer is `relay mcp` as one session registers it with its CLI, each
// CLI its own way (Claude Code: --mcp-config and an allow rule in the
// session's settings; Codex: -c mcp_servers.relay.… overrides; Gemini CLI:
// a settings overlay). Nothing the user wrote is touched.
type MCPServer struct {
	Command string   // the relay binary
	Args    []string // its arguments: mcp
	// Env is what the server must see, whatever the CLI passes on of its
	// own environment (RELAY_NAME, RELAY_WORKSPACE, RELAY_HOME): no secret,
	// since some CLIs show it on their command line.
	Env map[string]string
	// PassEnv names the variables the server needs from the CLI's
	// environment by reference only (RELAY_TOKEN, RELAY_CREDS): their
	// values never appear in an argument.
	PassEnv []string
}

// EnvKeys returns the keys of Env, sorted (for a stable command line).
func (m *MCPServer) EnvKeys() []string { return slices.Sorted(maps.Keys(m.Env)) }

// MCPPrimer is what the primer adds when relay's MCP server is registered
// with the agent's CLI: the second way to talk, and that one message goes
// one way.
const MCPPrimer = ` You may also have relay's tools (MCP server "relay": send, agents, inbox, log, memory_save, memory_search, memory_list, memory_forget):` +
	` they do the same as these lines, exactly, and return a result you can read. Use either way, but send each message only once.`

package codex

import (
	"encoding/json"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// MCPArgs returns the `-c` overrides that register relay's MCP server with
// Codex for one session (mcp_servers.relay.…), beside the user's servers;
// config.toml is not touched. Each value is TOML (a JSON string is a TOML
// basic string). Env goes as an inline table; PassEnv as env_vars, which
// Codex copies from its own environment by name, so that no secret shows
// on the command line. Nil when s is nil.
func MCPArgs(s *agents.MCPServer) []string {
	if s == nil || s.Command == "" {
		return nil
	}
	key := "mcp_servers." + agents.MCPName + "."
	args := []string{"-c", key + "command=" + quote(s.Command), "-c", key + "args=" + list(s.Args)}
	if len(s.Env) > 0 {
		var kv []string
		for _, k := range s.EnvKeys() {
			kv = append(kv, k+"="+quote(s.Env[k]))
		}
		args = append(args, "-c", key+"env={"+strings.Join(kv, ", ")+"}")
	}
	if len(s.PassEnv) > 0 {
		args = append(args, "-c", key+"env_vars="+list(s.PassEnv))
	}
	return args
}

// quote writes s as a TOML basic string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// list writes ss as a TOML array of strings.
func list(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

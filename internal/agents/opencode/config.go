package opencode

import (
	"encoding/json"
	"fmt"

	"github.com/relayhq/relay/internal/agents"
)

// ConfigContentEnv names the variable whose JSON OpenCode reads as its last
// configuration layer, after its global, OPENCODE_CONFIG and project files
// (OpenCode 1.18: merged key by key, "local" scope). relay registers its
// MCP server there, so that no file is written and none of the user's is
// touched; a value the user set is kept, relay's keys merged into it.
const ConfigContentEnv = "OPENCODE_CONFIG_CONTENT"

// configSetup returns the environment that adds relay's MCP server and
// plugin (its file, "" for none) to OpenCode's configuration for one
// session, nothing without either. The
// server is a local one ("type": "local", "command": the relay binary and
// its arguments) with the variables of MCPServer.Env; OpenCode starts it
// with its own environment plus those, so PassEnv's secrets (RELAY_TOKEN)
// reach it by inheritance and never appear in the configuration.
func configSetup(l agents.Launch, plugin string) ([]string, error) {
	if l.MCP == nil && plugin == "" {
		return nil, nil
	}
	cfg := map[string]any{}
	if base := lookup(l.Env, ConfigContentEnv); base != "" {
		if err := json.Unmarshal([]byte(base), &cfg); err != nil {
			return nil, fmt.Errorf("opencode config: %s: %w", ConfigContentEnv, err)
		}
		if cfg == nil { // the user's says null
			cfg = map[string]any{}
		}
	}
	if l.MCP != nil {
		servers, _ := cfg["mcp"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		env := map[string]string{}
		for _, k := range l.MCP.EnvKeys() {
			env[k] = l.MCP.Env[k]
		}
		servers[agents.MCPName] = map[string]any{
			"type":        "local",
			"command":     append([]string{l.MCP.Command}, l.MCP.Args...),
			"environment": env,
			"enabled":     true,
		}
		cfg["mcp"] = servers
	}
	if plugin != "" {
		// Added to the user's list: OpenCode joins the lists of its layers.
		list, _ := cfg["plugin"].([]any)
		cfg["plugin"] = append(list, "file://"+plugin)
	}
	if _, ok := cfg["$schema"]; !ok {
		cfg["$schema"] = "https://opencode.ai/config.json"
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("opencode config: %w", err)
	}
	return []string{ConfigContentEnv + "=" + string(data)}, nil
}

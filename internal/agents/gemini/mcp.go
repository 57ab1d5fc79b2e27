package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/statedir"
)

// SystemDefaultsEnv names the file of Gemini CLI's system defaults, the
// lowest-precedence settings layer: relay points it at an overlay that
// adds its MCP server, so that no file of the user's is touched and the
// user's own settings (mcpServers merge by name) still win.
const SystemDefaultsEnv = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH"

// defaultSystemDefaults is where Gemini CLI 0.61 reads its system
// defaults when SystemDefaultsEnv is not set (on Linux).
const defaultSystemDefaults = "/etc/gemini-cli/system-defaults.json"

// MCPOverlay returns the system defaults to use for one session: base (the
// defaults Gemini CLI would have read, nil when none) with relay's MCP
// server added as mcpServers.relay. The server is trusted (its tools run
// without a confirmation: they are the team's own) and gets PassEnv's
// values from env here, in a private file, because Gemini CLI redacts
// variables named like secrets (RELAY_TOKEN) from an MCP server's
// environment.
func MCPOverlay(base []byte, s *agents.MCPServer, env []string) ([]byte, error) {
	return Overlay(base, s, env, nil)
}

// Overlay is MCPOverlay for any of relay's additions: its MCP server when s
// is not nil, and hooks (HookSettings), appended to the hooks of base.
func Overlay(base []byte, s *agents.MCPServer, env []string, hooks map[string]any) ([]byte, error) {
	settings := map[string]any{}
	if len(base) > 0 {
		if err := json.Unmarshal(base, &settings); err != nil {
			return nil, fmt.Errorf("read the system defaults: %w", err)
		}
		if settings == nil { // the file says null
			settings = map[string]any{}
		}
	}
	if s != nil {
		vars := map[string]string{}
		for k, v := range s.Env {
			vars[k] = v
		}
		for _, k := range s.PassEnv {
			if v := lookup(env, k); v != "" {
				vars[k] = v
			}
		}
		servers, _ := settings["mcpServers"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		servers[agents.MCPName] = map[string]any{"command": s.Command, "args": s.Args, "env": vars, "trust": true}
		settings["mcpServers"] = servers
	}
	if err := addHooks(settings, hooks); err != nil {
		return nil, err
	}
	return json.MarshalIndent(settings, "", "  ")
}

// overlaySetup writes the overlay into relay's run folder (mode 0600: it
// may hold the hub's token) and returns the variable that points Gemini
// CLI at it; nothing when the session adds neither an MCP server nor
// hooks.
func overlaySetup(l agents.Launch, hooks map[string]any) ([]string, error) {
	if l.MCP == nil && len(hooks) == 0 {
		return nil, nil
	}
	basePath := lookup(l.Env, SystemDefaultsEnv)
	if basePath == "" {
		basePath = defaultSystemDefaults
	}
	base, err := os.ReadFile(basePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gemini settings: %w", err)
	}
	data, err := Overlay(base, l.MCP, l.Env, hooks)
	if err != nil {
		return nil, fmt.Errorf("gemini settings: %s: %w", basePath, err)
	}
	dir, err := statedir.EnsureSub(l.Home, "run")
	if err != nil {
		return nil, fmt.Errorf("gemini settings: %w", err)
	}
	// One file per agent of a workspace, rewritten by each of its sessions.
	name := "gemini-defaults-" + lookup(l.Env, "RELAY_WORKSPACE") + "-" + lookup(l.Env, "RELAY_NAME") + ".json"
	if l.MCP != nil {
		name = "gemini-defaults-" + l.MCP.Env["RELAY_WORKSPACE"] + "-" + l.MCP.Env["RELAY_NAME"] + ".json"
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("gemini settings: %w", err)
	}
	return []string{SystemDefaultsEnv + "=" + path}, nil
}

// lookup returns the last value of key in env (KEY=VALUE entries).
func lookup(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

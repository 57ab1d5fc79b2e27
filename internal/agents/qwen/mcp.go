package qwen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
	"github.com/relayhq/relay/internal/agents/gemini"
	"github.com/relayhq/relay/internal/statedir"
)

// SystemDefaultsEnv names the file of Qwen Code's system defaults, its
// lowest-precedence settings layer (Gemini CLI's, renamed): relay points
// it at an overlay that adds its MCP server and its PreToolUse hook, so
// that no file of the user's is touched and the user's own mcpServers
// (merged by name) still win.
// Unlike Gemini CLI 0.61, Qwen Code 0.24 reads the file wherever it is and
// whoever owns it.
const SystemDefaultsEnv = "QWEN_CODE_SYSTEM_DEFAULTS_PATH"

// defaultSystemDefaults is where Qwen Code reads its system defaults when
// SystemDefaultsEnv is not set (on Linux).
const defaultSystemDefaults = "/etc/qwen-code/system-defaults.json"

// settingsVersion is the "$version" of Qwen Code 0.24's settings: an
// overlay without it would be migrated, and written back, at each start.
const settingsVersion = 4

// overlaySetup writes the overlay holding relay's MCP server (as Gemini
// CLI's: mcpServers.relay, trusted, with the variables it needs) and
// hooks (HookSettings, after the defaults' own hooks) into relay's run
// folder, mode 0600 since it may hold the hub's token, and returns the
// variable that points Qwen Code at it; nothing when the session adds
// neither. Qwen Code runs the hooks of its system defaults whatever the
// folder's trust, and those of the user's settings beside them.
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
		return nil, fmt.Errorf("qwen settings: %w", err)
	}
	data, err := gemini.Overlay(base, l.MCP, l.Env, hooks)
	if err != nil {
		return nil, fmt.Errorf("qwen settings: %s: %w", basePath, err)
	}
	var settings map[string]any
	if err := json.Unmarshal(data, &settings); err != nil {
		return nil, fmt.Errorf("qwen settings: %w", err)
	}
	if _, ok := settings["$version"]; !ok {
		settings["$version"] = settingsVersion
	}
	if data, err = json.MarshalIndent(settings, "", "  "); err != nil {
		return nil, fmt.Errorf("qwen settings: %w", err)
	}
	dir, err := statedir.EnsureSub(l.Home, "run")
	if err != nil {
		return nil, fmt.Errorf("qwen settings: %w", err)
	}
	// One file per agent of a workspace, rewritten by each of its sessions.
	ws, name := lookup(l.Env, "RELAY_WORKSPACE"), lookup(l.Env, "RELAY_NAME")
	if l.MCP != nil {
		ws, name = l.MCP.Env["RELAY_WORKSPACE"], l.MCP.Env["RELAY_NAME"]
	}
	path := filepath.Join(dir, "qwen-defaults-"+ws+"-"+name+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("qwen settings: %w", err)
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

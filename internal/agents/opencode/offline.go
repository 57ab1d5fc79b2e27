package opencode

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// Model is the model OpenCode is configured with offline
// (mockmodel.ChatModel), as "mock/mock-model".
const Model = "mock-model"

// offline runs OpenCode 1.18.33 against an OpenAI-compatible mock:
// ~/.config/opencode/opencode.json with a "mock" provider
// (@ai-sdk/openai-compatible) chosen for model and small_model, no
// auto-update, no sharing; and the environment that stops it fetching the
// model list, updating, downloading language servers, reading Claude
// Code's files, and installing its plugin from the network.
//
// At each start OpenCode installs its plugin package (@opencode-ai/plugin)
// into its configuration folder with its own npm, unless that folder has a
// node_modules folder and a package-lock.json listing the package. Offline
// the install fails only after npm gave up on the registry (20 to 45 s on
// a loaded machine), and the TUI draws nothing until then: that was the
// blank screen. The lock file says it is installed, so OpenCode asks
// nothing of npm.
func offline() *agents.Offline {
	return &agents.Offline{API: "chat", Setup: offlineSetup, Ready: Ready}
}

func offlineSetup(o agents.OfflineOptions) (agents.OfflineSetup, error) {
	cfg, _ := json.MarshalIndent(map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"mock": map[string]any{
			"npm":     "@ai-sdk/openai-compatible",
			"name":    "Mock",
			"options": map[string]any{"baseURL": strings.TrimRight(o.Model, "/") + "/v1", "apiKey": "sk-mock"},
			"models":  map[string]any{Model: map[string]any{"name": "Mock model"}},
		}},
		"model":       "mock/" + Model,
		"small_model": "mock/" + Model,
		"autoupdate":  false,
		"share":       "disabled",
	}, "", "  ")
	if err := agents.WriteFiles(o.Home, map[string]string{
		".config/opencode/opencode.json":           string(cfg),
		".config/opencode/package-lock.json":       pluginLock,
		".config/opencode/node_modules/.gitignore": "*\n",
	}); err != nil {
		return agents.OfflineSetup{}, err
	}
	return agents.OfflineSetup{
		Env: []string{
			"XDG_CONFIG_HOME=" + filepath.Join(o.Home, ".config"),
			"XDG_DATA_HOME=" + filepath.Join(o.Home, ".local", "share"),
			"XDG_CACHE_HOME=" + filepath.Join(o.Home, ".cache"),
			"XDG_STATE_HOME=" + filepath.Join(o.Home, ".local", "state"),
			"OPENCODE_DISABLE_MODELS_FETCH=1",
			"OPENCODE_DISABLE_AUTOUPDATE=1",
			"OPENCODE_DISABLE_LSP_DOWNLOAD=1",
			"OPENCODE_DISABLE_CLAUDE_CODE=1",
			"npm_config_offline=true",
			"COLORTERM=truecolor",
		},
		ConfigDir:     filepath.Join(o.Home, ".local", "share", "opencode"),
		AnswerQueries: true,
	}, nil
}

// pluginLock is the package-lock.json that tells OpenCode its plugin
// package is installed in its configuration folder.
const pluginLock = `{"name": "opencode-config", "lockfileVersion": 3, "requires": true,
  "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}
`

// Ready reports whether an OpenCode screen is idle with its input box:
// its footer names its commands ("ctrl+p commands"), without "esc
// interrupt", on its home screen and in a session.
func Ready(screen string) bool {
	return strings.Contains(screen, "ctrl+p commands") && !strings.Contains(screen, "esc interrupt")
}

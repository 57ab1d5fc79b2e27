package qwen

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// Model is the model Qwen Code is configured with offline
// (mockmodel.ChatModel).
const Model = "mock-model"

// offline runs Qwen Code 0.24.4 against an OpenAI-compatible mock:
// OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL in the environment, and
// ~/.qwen/settings.json selecting the "openai" auth with folder trust,
// auto-update, usage statistics, telemetry and the managed auto-memory
// off (else it asks the model once more after every turn).
func offline() *agents.Offline {
	return &agents.Offline{API: "chat", Setup: offlineSetup, Ready: Ready}
}

func offlineSetup(o agents.OfflineOptions) (agents.OfflineSetup, error) {
	settings, _ := json.MarshalIndent(map[string]any{
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "openai"},
			"folderTrust": map[string]any{"enabled": false},
		},
		"general": map[string]any{
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"ide":       map[string]any{"enabled": false},
		"memory":    map[string]any{"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
	}, "", "  ")
	if err := agents.WriteFiles(o.Home, map[string]string{".qwen/settings.json": string(settings)}); err != nil {
		return agents.OfflineSetup{}, err
	}
	return agents.OfflineSetup{
		Env: []string{
			"OPENAI_API_KEY=sk-mock",
			"OPENAI_BASE_URL=" + strings.TrimRight(o.Model, "/") + "/v1",
			"OPENAI_MODEL=" + Model,
			"COLORTERM=truecolor",
		},
		ConfigDir: filepath.Join(o.Home, ".qwen"),
	}, nil
}

// Ready reports whether a Qwen Code screen shows its empty input row.
func Ready(screen string) bool {
	return strings.Contains(screen, "Type your message") && !strings.Contains(screen, "esc to cancel")
}

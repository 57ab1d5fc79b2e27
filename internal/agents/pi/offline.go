package pi

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// Model is the model pi is configured with offline (mockmodel.ChatModel).
const Model = "mock-model"

// offline runs pi 0.73.1 against an OpenAI-compatible mock: a "mock"
// provider in ~/.pi/agent/models.json (openai-completions, no developer
// role, no reasoning effort), chosen in settings.json, install telemetry
// off, and PI_OFFLINE / PI_SKIP_VERSION_CHECK so that it makes no other
// connection at start.
func offline() *agents.Offline {
	return &agents.Offline{API: "chat", Setup: offlineSetup, Ready: Ready}
}

func offlineSetup(o agents.OfflineOptions) (agents.OfflineSetup, error) {
	models, _ := json.MarshalIndent(map[string]any{"providers": map[string]any{"mock": map[string]any{
		"baseUrl": strings.TrimRight(o.Model, "/") + "/v1",
		"api":     "openai-completions",
		"apiKey":  "sk-mock",
		"compat":  map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
		"models":  []any{map[string]any{"id": Model, "name": "Mock model", "reasoning": false}},
	}}}, "", "  ")
	settings, _ := json.MarshalIndent(map[string]any{
		"defaultProvider": "mock", "defaultModel": Model, "enableInstallTelemetry": false,
	}, "", "  ")
	if err := agents.WriteFiles(o.Home, map[string]string{
		".pi/agent/models.json":   string(models),
		".pi/agent/settings.json": string(settings),
	}); err != nil {
		return agents.OfflineSetup{}, err
	}
	return agents.OfflineSetup{
		Env:       []string{"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1"},
		ConfigDir: filepath.Join(o.Home, ".pi", "agent"),
	}, nil
}

// Ready reports whether a pi screen is ready for a prompt.
func Ready(screen string) bool {
	return strings.Contains(screen, Model) && !strings.Contains(screen, "Working")
}

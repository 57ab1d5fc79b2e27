package gemini

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// Model is the model Gemini CLI is started with offline: naming one skips
// the routing call that would otherwise precede every turn.
const Model = "gemini-2.5-flash"

// offline runs Gemini CLI 0.61.0 against a mock Gemini API.
func offline() *agents.Offline {
	return &agents.Offline{API: "gemini", Ready: Ready,
		Setup: func(o agents.OfflineOptions) (agents.OfflineSetup, error) { return OfflineSetup(o, nil) }}
}

// OfflineSetup is the profile's Offline.Setup with settings merged into
// settings.json at the top level (e.g. "hooks"): GEMINI_CLI_HOME is the
// private HOME, whose .gemini/settings.json selects API-key auth and turns
// off folder trust, updates, usage statistics, telemetry and the IDE
// integration; GOOGLE_GEMINI_BASE_URL at the mock; argv carries -m Model.
func OfflineSetup(o agents.OfflineOptions, settings map[string]any) (agents.OfflineSetup, error) {
	all := map[string]any{
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust": map[string]any{"enabled": false},
		},
		"general": map[string]any{
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
		},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"ide":       map[string]any{"enabled": false},
	}
	maps.Copy(all, settings)
	b, _ := json.MarshalIndent(all, "", "  ")
	if err := agents.WriteFiles(o.Home, map[string]string{".gemini/settings.json": string(b)}); err != nil {
		return agents.OfflineSetup{}, err
	}
	return agents.OfflineSetup{
		Args: []string{"-m", Model},
		Env: []string{
			"GEMINI_CLI_HOME=" + o.Home,
			"GEMINI_API_KEY=mock-key",
			"GOOGLE_GEMINI_BASE_URL=" + strings.TrimRight(o.Model, "/"),
			// Without it Gemini CLI prints a true-colour warning above its UI.
			"COLORTERM=truecolor",
		},
		ConfigDir: o.Home,
	}, nil
}

// Ready reports whether a Gemini CLI screen shows its empty input row (the
// "Type your message" placeholder).
func Ready(screen string) bool {
	return strings.Contains(screen, "Type your message") && !strings.Contains(screen, "esc to cancel")
}

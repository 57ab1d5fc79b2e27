package claude

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// MockKey is the API key Claude Code sends to the mock model offline.
const MockKey = "sk-ant-mock"

// The renderers OfflineSetup can pick (Claude Code's CLAUDE_CODE_NO_FLICKER).
const (
	// RendererFullscreen is the alternate screen with mouse tracking:
	// what new installs get and what the recordings in testdata show.
	RendererFullscreen = "fullscreen"
	// RendererClassic is inline on the main screen; output scrolls into
	// the terminal's scrollback.
	RendererClassic = "classic"
)

// offline runs Claude Code 2.1.328 against a mock Anthropic Messages API.
func offline() *agents.Offline {
	return &agents.Offline{API: "anthropic", Ready: Ready,
		Setup: func(o agents.OfflineOptions) (agents.OfflineSetup, error) { return OfflineSetup(o, "") }}
}

// OfflineSetup is the profile's Offline.Setup with a renderer ("" means
// fullscreen): its state in a private CLAUDE_CONFIG_DIR (~/.claude) whose
// .claude.json skips onboarding, approves the mock key (MockKey) and
// trusts the work folder; ANTHROPIC_BASE_URL at the mock; no updater, no
// non-essential traffic.
func OfflineSetup(o agents.OfflineOptions, renderer string) (agents.OfflineSetup, error) {
	noFlicker := "1"
	switch renderer {
	case "", RendererFullscreen:
	case RendererClassic:
		noFlicker = "0"
	default:
		return agents.OfflineSetup{}, fmt.Errorf("renderer %q: want %s or %s", renderer, RendererFullscreen, RendererClassic)
	}
	config := filepath.Join(o.Home, ".claude")
	key := MockKey
	if len(key) > 20 {
		key = key[len(key)-20:]
	}
	state, _ := json.MarshalIndent(map[string]any{
		"hasCompletedOnboarding": true,
		"customApiKeyResponses":  map[string]any{"approved": []string{key}, "rejected": []string{}},
		"projects":               map[string]any{o.Work: map[string]any{"hasTrustDialogAccepted": true}},
	}, "", "  ")
	if err := agents.WriteFiles(o.Home, map[string]string{".claude/.claude.json": string(state)}); err != nil {
		return agents.OfflineSetup{}, err
	}
	return agents.OfflineSetup{
		Env: []string{
			"CLAUDE_CONFIG_DIR=" + config,
			"ANTHROPIC_BASE_URL=" + strings.TrimRight(o.Model, "/"),
			"ANTHROPIC_API_KEY=" + MockKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1",
			"CLAUDE_CODE_NO_FLICKER=" + noFlicker,
		},
		ConfigDir: config,
	}, nil
}

// Ready reports whether a Claude Code screen shows an empty, idle input
// row: a line that is "❯" alone, and no "esc to interrupt" footer.
func Ready(screen string) bool {
	return agents.ReadyIdle(screen, func(line string) bool { return line == "❯" })
}

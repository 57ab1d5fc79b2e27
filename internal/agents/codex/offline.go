package codex

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/relayhq/relay/internal/agents"
)

// Model is the model name the mock catalog offers offline.
const Model = "mock-model"

// offline runs Codex 0.169.0 against a mock Responses API.
func offline() *agents.Offline {
	return &agents.Offline{API: "responses", Ready: Ready,
		Setup: func(o agents.OfflineOptions) (agents.OfflineSetup, error) { return OfflineSetup(o, nil, "") }}
}

// OfflineSetup is the profile's Offline.Setup with extra keys of
// config.toml's [features] table (e.g. "codex_hooks = true") and TOML
// appended to config.toml after the tables it writes
// ([model_providers.mock], [features], [analytics], [tui],
// [projects."WORK"]; start it with a table header): a private, writable
// CODEX_HOME (~/.codex) whose config.toml selects a custom "mock" provider
// (wire_api responses, no retries, no update check, no analytics, no
// daemon, no animations), a one-entry model catalog, and the work folder
// trusted; argv carries --no-daemon.
func OfflineSetup(o agents.OfflineOptions, features []string, extraConfig string) (agents.OfflineSetup, error) {
	codexHome := filepath.Join(o.Home, ".codex")
	catalog := filepath.Join(codexHome, "catalog.json")
	b, _ := json.MarshalIndent(map[string]any{"models": []any{catalogEntry()}}, "", "  ")
	config := fmt.Sprintf(`model = %q
model_catalog_json = %q
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "Mock"
base_url = %q
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
daemon_auto_start = false
%s

[analytics]
enabled = false

[tui]
animations = false

[projects.%q]
trust_level = "trusted"
%s`, Model, catalog, strings.TrimRight(o.Model, "/")+"/v1", strings.Join(features, "\n"), o.Work, extraConfig)
	// Codex refuses to put its helper links in a CODEX_HOME below the temp
	// dir and warns on the screen: give it a temp dir of its own.
	if err := agents.WriteFiles(o.Home, map[string]string{
		".codex/catalog.json": string(b),
		".codex/config.toml":  config,
	}); err != nil {
		return agents.OfflineSetup{}, err
	}
	tmp := filepath.Join(o.Home, ".tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return agents.OfflineSetup{}, fmt.Errorf("codex offline: %w", err)
	}
	return agents.OfflineSetup{
		Args:      []string{"--no-daemon"},
		Env:       []string{"CODEX_HOME=" + codexHome, "MOCK_API_KEY=sk-mock", "TMPDIR=" + tmp},
		ConfigDir: codexHome,
	}, nil
}

// catalogEntry describes the mock model to Codex 0.169.0 (the shape
// of the catalog bundled in its binary), so that it neither warns about an
// unknown model nor offers a migration.
func catalogEntry() map[string]any {
	return map[string]any{
		"slug":                              Model,
		"display_name":                      "Mock model",
		"description":                       "The test suite's mock model.",
		"base_instructions":                 "You are a coding agent in a test. Answer briefly.",
		"prefer_websockets":                 false,
		"support_verbosity":                 false,
		"default_verbosity":                 nil,
		"apply_patch_tool_type":             "freeform",
		"web_search_tool_type":              "text",
		"input_modalities":                  []string{"text"},
		"supports_image_detail_original":    false,
		"truncation_policy":                 map[string]any{"mode": "tokens", "limit": 10000},
		"supports_parallel_tool_calls":      false,
		"tool_mode":                         nil,
		"multi_agent_version":               nil,
		"multi_agent_reasoning_effort":      nil,
		"use_responses_lite":                false,
		"supports_reasoning_effort_updates": false,
		"include_skills_usage_instructions": false,
		"include_apps_usage_instructions":   false,
		"include_plugin_usage_instructions": false,
		"guardian":                          nil,
		"node_repl_auto_review_required":    false,
		"node_repl_disabled":                true,
		"requires_sandboxed_review":         false,
		"auto_review_model_override":        nil,
		"model_specialty":                   nil,
		"context_window":                    272000,
		"max_context_window":                272000,
		"auto_compact_token_limit":          nil,
		"default_reasoning_summary":         "none",
		"default_reasoning_level":           "medium",
		"supported_reasoning_levels": []any{
			map[string]any{"effort": "medium", "description": "Balanced"},
		},
		"shell_type":                           "shell_command",
		"visibility":                           "list",
		"minimal_client_version":               "0.1.0",
		"supported_in_api":                     true,
		"availability_nux":                     nil,
		"upgrade":                              nil,
		"priority":                             1,
		"experimental_supported_tools":         []any{},
		"supports_search_tool":                 false,
		"supports_experimental_context":        false,
		"default_service_tier":                 nil,
		"service_tiers":                        []any{},
		"additional_speed_tiers":               []any{},
		"supports_reasoning_summary_parameter": false,
		"supports_reasoning_summaries":         false,
	}
}

// Ready reports whether a Codex screen shows its idle input row (the "›"
// prompt) and no "esc to interrupt" status.
func Ready(screen string) bool {
	return agents.ReadyIdle(screen, func(line string) bool { return strings.HasPrefix(line, "›") })
}

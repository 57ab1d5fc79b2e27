package agenttest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// CodexOptions configure a Codex session against a mock model. The zero
// value (apart from Model) means defaults.
type CodexOptions struct {
	// Model is the mock Responses server's base URL (mockmodel.Responses.URL).
	Model string
	// WorkDir is the project folder Codex starts in, marked trusted; empty
	// means a fresh temporary folder.
	WorkDir string
	// Cols and Rows size the terminal; 0 means 100 and 30.
	Cols, Rows int
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// Env adds or overrides environment variables ("KEY=value").
	Env []string
	// Features are extra keys of config.toml's [features] table, e.g.
	// "codex_hooks = true".
	Features []string
	// ExtraConfig is TOML appended to config.toml, after the tables the
	// harness writes ([model_providers.mock], [features], [analytics],
	// [tui], [projects."WORK"]): start it with a table header.
	ExtraConfig string
	// Binary is the codex executable; empty means Binary(t, "codex").
	Binary string
}

// CodexModel is the model name the mock catalog offers.
const CodexModel = "mock-model"

// Codex returns the command that runs the pinned Codex offline against
// opts.Model: a temporary, writable CODEX_HOME whose config.toml selects a
// custom "mock" provider (wire_api responses, no retries, no update check,
// no analytics, no daemon, no animations), a one-entry model catalog, and
// the work folder trusted; argv carries --no-daemon. It skips the test when
// Codex is not installed.
func Codex(t testing.TB, opts CodexOptions) Cmd {
	t.Helper()
	state := forTest(t, "codex", &opts.Binary, &opts.WorkDir)
	c, err := CodexCmd(state, opts)
	return mustCmd(t, c, err)
}

// CodexCmd is Codex for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func CodexCmd(stateDir string, opts CodexOptions) (Cmd, error) {
	// Codex refuses to put its helper links in a CODEX_HOME below the temp
	// dir and warns on the screen: give it a temp dir of its own.
	s, err := newCLISetup("codex", stateDir, opts.Binary, opts.WorkDir, opts.Model, "codex-home", "tmp")
	if err != nil {
		return Cmd{}, err
	}
	codexHome := s.path("codex-home")
	catalog := filepath.Join(codexHome, "catalog.json")
	b, _ := json.MarshalIndent(map[string]any{"models": []any{codexCatalogEntry()}}, "", "  ")
	if err := s.write(catalog, b); err != nil {
		return Cmd{}, err
	}
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
%s`, CodexModel, catalog, strings.TrimRight(opts.Model, "/")+"/v1", strings.Join(opts.Features, "\n"), s.work, opts.ExtraConfig)
	if err := s.write(filepath.Join(codexHome, "config.toml"), []byte(config)); err != nil {
		return Cmd{}, err
	}
	env := []string{"CODEX_HOME=" + codexHome, "MOCK_API_KEY=sk-mock", "TMPDIR=" + s.path("tmp")}
	argv := append([]string{opts.Binary, "--no-daemon"}, opts.ExtraArgs...)
	return s.cmd(argv, env, opts.Env, codexHome, opts.Cols, opts.Rows), nil
}

// codexCatalogEntry describes the mock model to Codex 0.169.0 (the shape
// of the catalog bundled in its binary), so that it neither warns about an
// unknown model nor offers a migration.
func codexCatalogEntry() map[string]any {
	return map[string]any{
		"slug":                              CodexModel,
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

// CodexReady reports whether a Codex screen shows its idle input row (the
// "›" prompt) and no "esc to interrupt" status.
func CodexReady(screen string) bool {
	return readyIdle(screen, func(line string) bool { return strings.HasPrefix(line, "›") })
}

package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// GeminiOptions configure a Gemini CLI session against a mock model. The
// zero value (apart from Model) means defaults.
type GeminiOptions struct {
	// Model is the mock Gemini server's base URL (mockmodel.Gemini.URL).
	Model string
	// WorkDir is the project folder Gemini CLI starts in; empty means a
	// fresh temporary folder.
	WorkDir string
	// Cols and Rows size the terminal; 0 means 100 and 30.
	Cols, Rows int
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// Env adds or overrides environment variables ("KEY=value").
	Env []string
	// Settings are merged into settings.json at the top level (e.g. "hooks").
	Settings map[string]any
	// Binary is the gemini executable; empty means Binary(t, "gemini").
	Binary string
}

// GeminiModel is the model Gemini CLI is started with: naming one skips the
// routing call that would otherwise precede every turn.
const GeminiModel = "gemini-2.5-flash"

// Gemini returns the command that runs the pinned Gemini CLI offline
// against opts.Model: a temporary GEMINI_CLI_HOME (and HOME) whose
// .gemini/settings.json selects API-key auth, turns off folder trust,
// updates, usage statistics, telemetry and the IDE integration; argv
// carries -m gemini-2.5-flash. It skips the test when Gemini CLI is not
// installed.
func Gemini(t testing.TB, opts GeminiOptions) Cmd {
	t.Helper()
	if opts.Binary == "" {
		opts.Binary = Binary(t, "gemini")
	}
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	c, err := GeminiCmd(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// GeminiCmd is Gemini for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func GeminiCmd(stateDir string, opts GeminiOptions) (Cmd, error) {
	if opts.Binary == "" || opts.WorkDir == "" || opts.Model == "" {
		return Cmd{}, fmt.Errorf("gemini command: Binary, WorkDir and Model must be set (have %q, %q, %q)",
			opts.Binary, opts.WorkDir, opts.Model)
	}
	if opts.Cols <= 0 {
		opts.Cols = 100
	}
	if opts.Rows <= 0 {
		opts.Rows = 30
	}
	work, err := realDir(opts.WorkDir)
	if err != nil {
		return Cmd{}, fmt.Errorf("gemini command: %w", err)
	}
	home := filepath.Join(stateDir, "home")
	dotGemini := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dotGemini, 0o700); err != nil {
		return Cmd{}, fmt.Errorf("gemini command: %w", err)
	}
	settings := map[string]any{
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
	for k, v := range opts.Settings {
		settings[k] = v
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(dotGemini, "settings.json"), b, 0o600); err != nil {
		return Cmd{}, fmt.Errorf("gemini command: %w", err)
	}
	env := baseEnv(home)
	env = append(env,
		"GEMINI_CLI_HOME="+home,
		"GEMINI_API_KEY=mock-key",
		"GOOGLE_GEMINI_BASE_URL="+strings.TrimRight(opts.Model, "/"),
		// Without it Gemini CLI prints a true-colour warning above its UI.
		"COLORTERM=truecolor",
	)
	env = mergeEnv(env, opts.Env)
	argv := append([]string{opts.Binary, "-m", GeminiModel}, opts.ExtraArgs...)
	return Cmd{Argv: argv, Env: env, Dir: work, Cols: opts.Cols, Rows: opts.Rows, ConfigDir: home}, nil
}

// GeminiReady reports whether a Gemini CLI screen shows its empty input
// row (the "Type your message" placeholder).
func GeminiReady(screen string) bool {
	return strings.Contains(screen, "Type your message") && !strings.Contains(screen, "esc to cancel")
}

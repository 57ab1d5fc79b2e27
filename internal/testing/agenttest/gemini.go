package agenttest

import (
	"encoding/json"
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
	state := forTest(t, "gemini", &opts.Binary, &opts.WorkDir)
	c, err := GeminiCmd(state, opts)
	return mustCmd(t, c, err)
}

// GeminiCmd is Gemini for callers without a test: state goes into the
// existing folder stateDir, and opts.Binary and opts.WorkDir must be set.
func GeminiCmd(stateDir string, opts GeminiOptions) (Cmd, error) {
	s, err := newCLISetup("gemini", stateDir, opts.Binary, opts.WorkDir, opts.Model, "home/.gemini")
	if err != nil {
		return Cmd{}, err
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
	if err := s.write(s.path("home/.gemini/settings.json"), b); err != nil {
		return Cmd{}, err
	}
	env := []string{
		"GEMINI_CLI_HOME=" + s.home,
		"GEMINI_API_KEY=mock-key",
		"GOOGLE_GEMINI_BASE_URL=" + strings.TrimRight(opts.Model, "/"),
		// Without it Gemini CLI prints a true-colour warning above its UI.
		"COLORTERM=truecolor",
	}
	argv := append([]string{opts.Binary, "-m", GeminiModel}, opts.ExtraArgs...)
	return s.cmd(argv, env, opts.Env, s.home, opts.Cols, opts.Rows), nil
}

// GeminiReady reports whether a Gemini CLI screen shows its empty input
// row (the "Type your message" placeholder).
func GeminiReady(screen string) bool {
	return strings.Contains(screen, "Type your message") && !strings.Contains(screen, "esc to cancel")
}

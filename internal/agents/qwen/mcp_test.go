package qwen

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents"
)

// TestMCPOverlay: relay's MCP server goes into a private overlay of Qwen
// Code's system defaults, beside what the defaults already held, with the
// secrets it needs and the settings version Qwen Code 0.24 expects; the
// session's environment points Qwen Code at it.
func TestMCPOverlay(t *testing.T) {
	t.Parallel()
	home, dir := t.TempDir(), t.TempDir()
	base := filepath.Join(dir, "defaults.json")
	if err := os.WriteFile(base, []byte(`{"mcpServers": {"other": {"command": "x"}}, "ui": {"theme": "dark"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	l := agents.Launch{
		Env:  []string{SystemDefaultsEnv + "=" + base, "RELAY_TOKEN=s3cret", "HOME=" + home},
		Home: home,
		Log:  slog.New(slog.DiscardHandler),
		MCP: &agents.MCPServer{Command: "/bin/relay", Args: []string{"mcp"},
			Env: map[string]string{"RELAY_NAME": "Carol", "RELAY_WORKSPACE": "w"}, PassEnv: []string{"RELAY_TOKEN"}},
	}
	set, err := exact(l)
	if err != nil {
		t.Fatal(err)
	}
	path := lookup(set.Env, SystemDefaultsEnv)
	if path == "" || path == base || !strings.HasPrefix(path, home) {
		t.Fatalf("env %q does not point at an overlay in relay's home", set.Env)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("overlay %s: %v, %v", path, fi, err)
	}
	data, _ := os.ReadFile(path)
	var got struct {
		Version    int `json:"$version"`
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
			Trust   bool
		} `json:"mcpServers"`
		UI map[string]any `json:"ui"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	r := got.MCPServers["relay"]
	if r.Command != "/bin/relay" || len(r.Args) != 1 || !r.Trust || r.Env["RELAY_TOKEN"] != "s3cret" || r.Env["RELAY_NAME"] != "Carol" {
		t.Errorf("relay's server: %+v", r)
	}
	if _, ok := got.MCPServers["other"]; !ok || got.UI["theme"] != "dark" || got.Version != settingsVersion {
		t.Errorf("overlay lost the defaults or the version:\n%s", data)
	}
	l.MCP = nil
	if set, err = exact(l); err != nil || lookup(set.Env, SystemDefaultsEnv) != "" {
		t.Errorf("without MCP: %q, %v", set.Env, err)
	}
}

package claude

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents"
)

func TestMCPSetup(t *testing.T) {
	l := agents.Launch{Log: slog.New(slog.DiscardHandler)}
	if args, allow := mcpSetup(l); args != nil || allow != nil {
		t.Errorf("no server: %q, %q", args, allow)
	}
	l.MCP = &agents.MCPServer{Command: "/bin/relay", Args: []string{"mcp"}, Env: map[string]string{"RELAY_NAME": "Alice"}}
	args, allow := mcpSetup(l)
	if len(args) != 1 || !strings.HasPrefix(args[0], "--mcp-config=") {
		t.Fatalf("args %q: want one --mcp-config=JSON (a separate value would swallow the prompt)", args)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(args[0], "--mcp-config=")), &cfg); err != nil {
		t.Fatal(err)
	}
	if s := cfg.MCPServers["relay"]; s.Command != "/bin/relay" || s.Args[0] != "mcp" || s.Env["RELAY_NAME"] != "Alice" {
		t.Errorf("config %+v", cfg)
	}
	settings, err := SettingsAllowing("/bin/relay", allow)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Permissions struct{ Allow []string } `json:"permissions"`
		Hooks       map[string]any           `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(settings), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Permissions.Allow) != 1 || st.Permissions.Allow[0] != "mcp__relay" || len(st.Hooks) == 0 {
		t.Errorf("settings %s", settings)
	}
	if plain, _ := Settings("/bin/relay"); strings.Contains(plain, "permissions") {
		t.Errorf("Settings without MCP allows tools: %s", plain)
	}
}

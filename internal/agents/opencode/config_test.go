package opencode

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/agents"
)

// TestConfigSetup: relay's MCP server goes into OPENCODE_CONFIG_CONTENT as
// a local server, merged into what the user set there, with no secret in
// it (OpenCode passes its own environment on to the server); nothing
// without an MCP server.
func TestConfigSetup(t *testing.T) {
	t.Parallel()
	mcp := &agents.MCPServer{Command: "/bin/relay", Args: []string{"mcp"},
		Env: map[string]string{"RELAY_NAME": "Carol", "RELAY_WORKSPACE": "w"}, PassEnv: []string{"RELAY_TOKEN"}}
	tests := []struct {
		name      string
		user      string // the user's OPENCODE_CONFIG_CONTENT
		mcp       *agents.MCPServer
		wantOther bool
	}{
		{"alone", "", mcp, false},
		{"merged into the user's", `{"mcp": {"other": {"type": "remote", "url": "http://x"}}, "theme": "dark"}`, mcp, true},
		{"user's null", `null`, mcp, false},
		{"no MCP server", `{"theme": "dark"}`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := []string{"RELAY_TOKEN=s3cret", "HOME=" + t.TempDir()}
			if tt.user != "" {
				env = append(env, ConfigContentEnv+"="+tt.user)
			}
			l := agents.Launch{Env: env, Dir: t.TempDir(), Log: slog.New(slog.DiscardHandler), MCP: tt.mcp}
			set, err := exact(l)
			if err != nil {
				t.Fatal(err)
			}
			content := lookup(set.Env, ConfigContentEnv)
			if tt.mcp == nil {
				if content != "" {
					t.Fatalf("without MCP the environment adds %q", content)
				}
				return
			}
			if strings.Contains(content, "s3cret") {
				t.Errorf("the token is in the configuration: %s", content)
			}
			var got struct {
				MCP map[string]struct {
					Type        string
					Command     []string
					Environment map[string]string
					Enabled     bool
				} `json:"mcp"`
				Theme string
			}
			if err := json.Unmarshal([]byte(content), &got); err != nil {
				t.Fatalf("%s: %v", content, err)
			}
			r := got.MCP["relay"]
			if r.Type != "local" || strings.Join(r.Command, " ") != "/bin/relay mcp" || !r.Enabled || r.Environment["RELAY_NAME"] != "Carol" {
				t.Errorf("relay's server: %+v", r)
			}
			if _, ok := got.MCP["other"]; ok != tt.wantOther || (tt.wantOther && got.Theme != "dark") {
				t.Errorf("the user's configuration is not kept: %s", content)
			}
		})
	}
}

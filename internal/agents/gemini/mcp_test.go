package gemini

import (
	"encoding/json"
	"testing"

	"github.com/relayhq/relay/internal/agents"
)

func TestMCPOverlay(t *testing.T) {
	s := &agents.MCPServer{Command: "/bin/relay", Args: []string{"mcp"},
		Env: map[string]string{"RELAY_NAME": "Carol"}, PassEnv: []string{"RELAY_TOKEN", "RELAY_CREDS"}}
	env := []string{"RELAY_TOKEN=old", "RELAY_TOKEN=secret", "PATH=/bin"}
	for _, c := range []struct {
		name, base string
		servers    int
		err        bool
	}{
		{"no defaults", "", 1, false},
		{"the admin's defaults are kept", `{"ui":{"theme":"x"},"mcpServers":{"docs":{"command":"docs-mcp"}}}`, 2, false},
		{"broken defaults", `{`, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := MCPOverlay([]byte(c.base), s, env)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want error %v", err, c.err)
			}
			if c.err {
				return
			}
			var got struct {
				UI         map[string]any `json:"ui"`
				MCPServers map[string]struct {
					Command string            `json:"command"`
					Env     map[string]string `json:"env"`
					Trust   bool              `json:"trust"`
				} `json:"mcpServers"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			r := got.MCPServers["relay"]
			if len(got.MCPServers) != c.servers || r.Command != "/bin/relay" || !r.Trust ||
				r.Env["RELAY_NAME"] != "Carol" || r.Env["RELAY_TOKEN"] != "secret" {
				t.Errorf("overlay:\n%s", b)
			}
			if _, ok := r.Env["RELAY_CREDS"]; ok {
				t.Errorf("an unset variable was passed: %v", r.Env)
			}
			if c.base != "" && got.UI["theme"] != "x" {
				t.Errorf("the base settings were lost:\n%s", b)
			}
		})
	}
}

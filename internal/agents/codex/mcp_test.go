package codex

import (
	"slices"
	"testing"

	"github.com/relayhq/relay/internal/agents"
)

func TestMCPArgs(t *testing.T) {
	if got := MCPArgs(nil); got != nil {
		t.Errorf("no server: %q", got)
	}
	s := &agents.MCPServer{Command: `/opt/my "relay"/relay`, Args: []string{"mcp"},
		Env: map[string]string{"RELAY_NAME": "Bob", "RELAY_HOME": "/h"}, PassEnv: []string{"RELAY_TOKEN"}}
	want := []string{
		"-c", `mcp_servers.relay.command="/opt/my \"relay\"/relay"`,
		"-c", `mcp_servers.relay.args=["mcp"]`,
		"-c", `mcp_servers.relay.env={RELAY_HOME="/h", RELAY_NAME="Bob"}`,
		"-c", `mcp_servers.relay.env_vars=["RELAY_TOKEN"]`,
	}
	if got := MCPArgs(s); !slices.Equal(got, want) {
		t.Errorf("MCPArgs =\n%q\nwant\n%q", got, want)
	}
}

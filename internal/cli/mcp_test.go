package cli

import (
	"strings"
	"testing"

	"github.com/relayhq/relay/hub"
)

// TestLocalHubThroughRelayHub: inside a wrapped agent RELAY_HUB names the
// local hub the wrapper found, without RELAY_TOKEN; relay send, agents and
// relay mcp (which runs there) take the token from RELAY_HOME. Before the
// fix the hub refused them (Authorization Violation).
func TestLocalHubThroughRelayHub(t *testing.T) {
	c := newHubCLI(t)
	c.must("up", "--detach")
	ep, err := hub.Discover(c.home)
	if err != nil {
		t.Fatal(err)
	}
	c.vars["RELAY_HUB"] = ep.URL
	if out := c.must("agents"); !strings.Contains(out, "no agents") {
		t.Errorf("agents printed %q", out)
	}
	// Another URL is still an external server: no token is invented for it.
	c.vars["RELAY_HUB"] = "nats://127.0.0.1:1"
	if code, _, _ := c.run("", "agents"); code == 0 {
		t.Error("agents succeeded against a server that does not exist")
	}
}

func TestMCPIdentity(t *testing.T) {
	for _, c := range []struct {
		name, flag string
		vars       map[string]string
		want       mcpIdent
		err        bool
	}{
		{"wrapped agent", "", map[string]string{"RELAY_NAME": "Alice", "USER": "joe"}, mcpIdent{Name: "Alice", Agent: true}, false},
		{"person", "", map[string]string{"USER": "joe"}, mcpIdent{Name: "joe"}, false},
		{"nobody", "", nil, mcpIdent{Name: "human"}, false},
		{"flag wins", "ci", map[string]string{"RELAY_NAME": "Alice"}, mcpIdent{Name: "ci"}, false},
		{"bad flag", "no way", nil, mcpIdent{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := &Env{Getenv: func(k string) string { return c.vars[k] }}
			got, err := mcpIdentity(env, c.flag)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want error %v", err, c.err)
			}
			if !c.err && got != c.want {
				t.Errorf("identity %+v, want %+v", got, c.want)
			}
		})
	}
}

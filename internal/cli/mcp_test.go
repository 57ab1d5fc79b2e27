package cli

import (
	"strings"
	"testing"

	"github.com/relayhq/relay/internal/hub"
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

// TestMCPEOFAfterSend: a client writes a tools/call send and closes its end
// at once (a script piping into relay mcp): the message reaches the hub
// and the reply is written before relay mcp exits 0. Before, it exited 0
// with no reply and nothing sent.
func TestMCPEOFAfterSend(t *testing.T) {
	c := newHubCLI(t)
	c.must("up", "--detach")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send","arguments":{"to":"bob","message":"sent just before EOF"}}}
`
	code, out, errs := c.run(in, "mcp", "--name", "carol")
	if code != 0 {
		t.Fatalf("relay mcp: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	var replied bool
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, `"id":2`) && strings.Contains(line, "Sent to bob") {
			replied = true
		}
	}
	if !replied {
		t.Errorf("no reply to the send:\n%s\nstderr: %s", out, errs)
	}
	if log := c.must("log"); !strings.Contains(log, "sent just before EOF") {
		t.Errorf("the message is not in the hub's log:\n%s", log)
	}
}

package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestMCPOpenCode: OpenCode offers relay's MCP tools (registered by relay
// wrap through OPENCODE_CONFIG_CONTENT) to its model with its own tools,
// its model calls relay's send, Alice (a shell) gets the message once, and
// the tool's result comes back to the model. The primer's turn (which
// tells the model of the tools) is the one that calls it: an OpenCode turn
// takes up to a minute on a loaded machine, so the test has only that one.
func TestMCPOpenCode(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	const (
		body = "Carol here: the nightly export is repaired, please check it"
		tool = "relay_send" // OpenCode's name: SERVER_TOOL
	)
	var mu sync.Mutex
	sent := false
	alice := tm.agent("Alice", script()...)
	tm.waitAgents("Alice")
	carol := launchScreenCLI(t, tm.relayEnv(), "opencode", "Carol", 0, 0, func(r mockmodel.Request) mockmodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch name := r.FindTool(tool); {
		case strings.Contains(r.LastUser, "Sent to Alice as message"):
			return mockmodel.Reply{Text: "All done."}
		case !sent && name != "" && strings.Contains(r.LastUser, `You are agent "Carol"`) && strings.Contains(r.LastUser, `MCP server "relay"`):
			// The primer; not its title request, which offers no tools.
			sent = true
			return mockmodel.Reply{ToolUse: &mockmodel.ToolUse{Name: name, Input: map[string]any{"to": "Alice", "message": body}}}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	// Its start (up to minutes under load) and the primer's turn.
	ctx, cancel := context.WithTimeout(context.Background(), cliStartWait+180*time.Second)
	defer cancel()
	if _, err := carol.model.WaitForRequest(ctx, "Sent to Alice as message"); err != nil {
		t.Fatalf("the send tool's result never reached OpenCode's model: %v\nscreen:\n%s\nlogs:\n%s", err, carol.screen(t), tm.wrapperLog())
	}
	alice.WaitOutput(delivery.ShellText(body), 60*time.Second)
	n := 0
	for _, line := range strings.Split(string(alice.Output()), "\n") {
		if strings.HasPrefix(line, "got: ") && strings.Contains(line, delivery.ShellText(body)) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("Alice got the message %d times:\n%s", n, ptytest.Screen(t, alice.Output(), 100, 30))
	}
}

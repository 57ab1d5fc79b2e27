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

// TestMCPQwen: Qwen Code lists relay's MCP tools (registered by relay wrap
// in an overlay of its system defaults) among its deferred tools, and its
// model calls relay's send through tool_search and tool_call, as Qwen Code
// 0.24 has it call an MCP tool; Alice (a shell) gets the message once,
// and the tool's result comes back to the model.
func TestMCPQwen(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	const (
		body = "Carol here: the cache warm-up job is fixed, please rerun it"
		tool = "mcp__relay__send" // Qwen Code's name: mcp__SERVER__TOOL
	)
	input := map[string]any{"to": "Alice", "message": body}
	var mu sync.Mutex
	step := 0
	alice := tm.agent("Alice", script()...)
	carol := tm.screenCLI("qwen", "Carol", func(r mockmodel.Request) mockmodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case step == 0 && strings.Contains(r.LastUser, "kick off"):
			step = 1
			if r.FindTool(tool) != "" { // offered at once
				step = 2
				return mockmodel.Reply{ToolUse: &mockmodel.ToolUse{Name: tool, Input: input}}
			}
			return mockmodel.Reply{ToolUse: &mockmodel.ToolUse{Name: "tool_search", Input: map[string]any{"query": "select:" + tool}}}
		case step == 1 && strings.Contains(r.LastUser, tool):
			step = 2
			return mockmodel.Reply{ToolUse: &mockmodel.ToolUse{Name: "tool_call", Input: map[string]any{"name": tool, "arguments": input}}}
		case step == 2 && strings.Contains(r.LastUser, "Sent to Alice as message"):
			step = 3
			return mockmodel.Reply{Text: "All done."}
		}
		return mockmodel.Reply{Text: "OK."}
	})
	tm.waitAgents("Alice", "Carol")
	carol.submit(t, "kick off: tell Alice")
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	if _, err := carol.model.WaitForRequest(ctx, "Sent to Alice as message"); err != nil {
		t.Fatalf("the send tool's result never reached Qwen Code's model: %v\nscreen:\n%s\nlogs:\n%s", err, carol.screen(t), tm.wrapperLog())
	}
	alice.WaitOutput(delivery.ShellText(body), 60*time.Second)
	carol.waitIdle(t)
	// Listed by Qwen Code itself: in a request up to the kick-off turn's,
	// before the script named the tool.
	listed := false
	for _, r := range carol.model.(interface{ All() []mockmodel.Request }).All() {
		listed = listed || strings.Contains(string(r.Body), tool)
		if strings.Contains(r.LastUser, "kick off") {
			break
		}
	}
	if !listed {
		t.Errorf("no request of Qwen Code up to the kick-off lists %s", tool)
	}
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

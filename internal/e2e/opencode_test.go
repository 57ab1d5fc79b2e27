package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/delivery"
	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
	"github.com/relayhq/relay/internal/testing/ptytest"
)

// TestOpenCodeHookAndMCP: relay's two additions to OpenCode's
// configuration (OPENCODE_CONFIG_CONTENT) work in one session. A
// [[hooks.BeforeToolCall]] hook refuses its bash call through relay's
// plugin (tool.execute.before): the command does not run and the hook's
// reason reaches the model as the tool's error. Its model then calls
// relay's MCP send tool (offered as relay_send beside its own tools):
// Alice, a shell, gets the message once, and the result comes back.
// Everything happens in the primer's turn: one OpenCode start and one
// turn, each up to minutes on a loaded machine.
func TestOpenCodeHookAndMCP(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	tmp := t.TempDir()
	seen, ran := filepath.Join(tmp, "seen"), filepath.Join(tmp, "ran")
	dir := project(t, fmt.Sprintf(`
[[hooks.BeforeToolCall]]
matcher = "bash"
[[hooks.BeforeToolCall.hooks]]
command = '''
in=$(cat)
printf '%%s\n' "$in" >> "%s"
case "$in" in
*rm\ -rf*) echo "no deletions on Fridays: ask the human first" >&2; exit 2 ;;
esac
'''
`, seen))
	const (
		body   = "Carol here: the nightly export is repaired, please check it"
		refuse = "no deletions on Fridays"
		sent   = "Sent to Alice as message"
	)
	var (
		mu   sync.Mutex
		step int
	)
	off, err := agenttest.OfflineOf("opencode")
	if err != nil {
		t.Fatal(err)
	}
	model, err := mockmodel.Start(off.API, mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(r.LastUser, sent):
			return mockmodel.Reply{Text: "All done."}
		case step == 1 && strings.Contains(r.LastUser, refuse) && r.FindTool("relay_send") != "":
			step = 2
			return mockmodel.Reply{ToolUse: &mockmodel.ToolUse{Name: r.FindTool("relay_send"), Input: map[string]any{"to": "Alice", "message": body}}}
		case step == 0 && r.FindTool("bash") != "" && strings.Contains(r.LastUser, `You are agent "Carol"`):
			// The primer; not its title request, which offers no tools.
			step = 1
			return mockmodel.Reply{Text: "Cleaning up.", ToolUse: &mockmodel.ToolUse{Name: r.FindTool("bash"),
				Input: map[string]any{"command": "touch " + ran + " && rm -rf build", "description": "clean"}}}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Close)
	alice := tm.agent("Alice", script()...)
	tm.waitAgents("Alice")
	cmd := agenttest.OfflineCLI(t, "opencode", agenttest.OfflineOptions{Model: model.URL, WorkDir: dir, Env: tm.relayEnv()})
	carol := &screenCLI{name: "Carol", kind: "opencode", model: model, ready: off.Ready,
		term: agenttest.Start(t, cmd.Under(relayBin, "wrap", "--name", "Carol", "--"))}
	for _, kv := range tm.relayEnv() {
		if h, ok := strings.CutPrefix(kv, "RELAY_HOME="); ok {
			carol.home = h
		}
	}
	stopGently(t, carol.term)
	// Its start (up to minutes under load) and the primer's turn.
	ctx, cancel := context.WithTimeout(context.Background(), cliStartWait+240*time.Second)
	defer cancel()
	if _, err := model.WaitForRequest(ctx, refuse); err != nil {
		t.Fatalf("the refusal never reached the model: %v\nscreen:\n%s\nhook saw: %q\nlog:\n%s", err, carol.screen(t), countLines(seen), carol.log())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the refused command ran\nlog:\n%s", carol.log())
	}
	if _, err := model.WaitForRequest(ctx, sent); err != nil {
		t.Fatalf("the send tool's result never reached OpenCode's model: %v\nscreen:\n%s\nlog:\n%s", err, carol.screen(t), carol.log())
	}
	alice.WaitOutput(delivery.ShellText(body), 60*time.Second)
	if n := len(countLines(seen)); n != 1 {
		t.Errorf("the hook saw %d calls, want 1 (bash)", n)
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

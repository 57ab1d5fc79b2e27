package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestBeforeToolCallOpenCode: a [[hooks.BeforeToolCall]] hook refuses
// OpenCode's bash call through relay's plugin (tool.execute.before): the
// command does not run and the hook's reason reaches the model as the
// tool's error. The primer's turn makes the call, so the test has one
// OpenCode turn (up to a minute each on a loaded machine).
func TestBeforeToolCallOpenCode(t *testing.T) {
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
	off, err := agenttest.OfflineOf("opencode")
	if err != nil {
		t.Fatal(err)
	}
	model, err := mockmodel.Start(off.API, mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.Contains(r.LastUser, "no deletions on Fridays"):
			return mockmodel.Reply{Text: "Understood."}
		case r.FindTool("bash") != "" && strings.Contains(r.LastUser, `You are agent "Carol"`):
			return mockmodel.Reply{Text: "Cleaning up.", ToolUse: &mockmodel.ToolUse{Name: r.FindTool("bash"),
				Input: map[string]any{"command": "touch " + ran + " && rm -rf build", "description": "clean"}}}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Close)
	cmd := agenttest.OfflineCLI(t, "opencode", agenttest.OfflineOptions{Model: model.URL, WorkDir: dir, Env: tm.relayEnv()})
	home := ""
	for _, kv := range tm.relayEnv() {
		if h, ok := strings.CutPrefix(kv, "RELAY_HOME="); ok {
			home = h
		}
	}
	carol := &screenCLI{home: home, name: "Carol", kind: "opencode", model: model, ready: off.Ready,
		term: agenttest.Start(t, cmd.Under(relayBin, "wrap", "--name", "Carol", "--"))}
	stopGently(t, carol.term)
	// Its start (up to minutes under load) and the primer's turn.
	ctx, cancel := context.WithTimeout(context.Background(), cliStartWait+180*time.Second)
	defer cancel()
	if _, err := model.WaitForRequest(ctx, "no deletions on Fridays"); err != nil {
		t.Fatalf("the refusal never reached the model: %v\nscreen:\n%s\nhook saw: %q\nlog:\n%s", err, carol.screen(t), countLines(seen), carol.log())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("the refused command ran\nlog:\n%s", carol.log())
	}
	if n := len(countLines(seen)); n != 1 {
		t.Errorf("the hook saw %d calls, want 1", n)
	}
}

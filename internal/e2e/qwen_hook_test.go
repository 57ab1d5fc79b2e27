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

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestQwenBeforeToolCall: a [[hooks.BeforeToolCall]] hook of the project
// sees Qwen Code's shell call through relay's PreToolUse hook (in the
// overlay of its system defaults) and refuses it: the command does not
// run and the hook's reason reaches the model as the tool's error. The
// next shell call it allows with context: the command runs, and the context
// reaches the model after the call's result (relay's PostToolUse hook). All
// in the primer's turn (--yolo: no approval dialog before the hook).
func TestQwenBeforeToolCall(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	tmp := t.TempDir()
	seen, ran := filepath.Join(tmp, "seen"), filepath.Join(tmp, "ran")
	dir := project(t, fmt.Sprintf(`
[[hooks.BeforeToolCall]]
matcher = "run_shell_command"
[[hooks.BeforeToolCall.hooks]]
command = '''
in=$(cat)
printf '%%s\n' "$in" >> "%s"
case "$in" in
*rm\ -rf*) echo "no deletions on Fridays: ask the human first" >&2; exit 2 ;;
*echo\ q7*) echo '{"inject": "ctx-q7: run the linter next"}' ;;
esac
'''
`, seen))
	const (
		refuse = "no deletions on Fridays"
		added  = "ctx-q7: run the linter next"
		output = "q7-ran"
	)
	var (
		mu   sync.Mutex
		step int
	)
	off, err := agenttest.OfflineOf("qwen")
	if err != nil {
		t.Fatal(err)
	}
	model, err := mockmodel.Start(off.API, mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case step == 2 && strings.Contains(r.LastUser, output):
			step = 3
			return mockmodel.Reply{Text: "Done."}
		case step == 1 && strings.Contains(r.LastUser, refuse):
			step = 2
			return mockmodel.Reply{Text: "Understood; echoing instead.", ToolUse: &mockmodel.ToolUse{Name: "run_shell_command",
				Input: map[string]any{"command": "echo " + output, "description": "echo"}}}
		case step == 0 && r.FindTool("run_shell_command") != "" && strings.Contains(r.LastUser, `You are agent "Carol"`):
			step = 1
			return mockmodel.Reply{Text: "Cleaning up.", ToolUse: &mockmodel.ToolUse{Name: "run_shell_command",
				Input: map[string]any{"command": "touch " + ran + " && rm -rf build", "description": "clean"}}}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(model.Close)
	cmd := agenttest.OfflineCLI(t, "qwen", agenttest.OfflineOptions{Model: model.URL, WorkDir: dir, Env: tm.relayEnv(), ExtraArgs: []string{"--yolo"}})
	carol := &screenCLI{name: "Carol", kind: "qwen", model: model, ready: off.Ready,
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
	// The call's result, whether refused or run (its output names the
	// command), so that a call that ran fails at once.
	r, err := model.WaitFor(ctx, func(r mockmodel.Request) bool {
		return strings.Contains(r.LastUser, refuse) || strings.Contains(r.LastUser, ran)
	}, "the shell call's result")
	if err != nil || !strings.Contains(r.LastUser, refuse) {
		t.Fatalf("the refusal never reached the model: %v\nlast request: %q\nscreen:\n%s\nhook saw: %q\nlog:\n%s", err, r.LastUser, carol.screen(t), countLines(seen), carol.log())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the refused command ran\nlog:\n%s", carol.log())
	}
	// The allowed call's result, with the context after the output.
	r, err = model.WaitFor(ctx, func(r mockmodel.Request) bool { return strings.Contains(r.LastUser, output) }, "the allowed call's result")
	if err != nil {
		t.Fatalf("the allowed call's result never reached the model: %v\nscreen:\n%s\nlog:\n%s", err, carol.screen(t), carol.log())
	}
	if i, j := strings.Index(r.LastUser, output), strings.Index(r.LastUser, added); j < 0 || j < i {
		t.Errorf("the hook's context is not after the call's result: %q", r.LastUser)
	}
	if got := countLines(seen); len(got) != 2 || !strings.Contains(got[0], "rm -rf") || !strings.Contains(got[1], "echo "+output) {
		t.Errorf("the hook saw %q, want the two shell calls", got)
	}
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/testing/agenttest"
	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// TestBeforeToolCallGemini: the real Gemini CLI (in YOLO mode: its tools run
// without asking) under relay wrap, with a BeforeToolCall hook. The model
// asks for a shell command that would write a marker file; the hook refuses
// it (exit 2, the reason on stderr): the command never runs and the
// model's next request carries the hook's reason. Then the model asks for
// a harmless command; the hook lets it run and prints a note: the command
// runs and the note reaches the model with the tool's result. The hook
// sees the tool's name and input as it does for Claude Code. Without relay
// installing Gemini CLI's BeforeTool hook, the first command runs.
func TestBeforeToolCallGemini(t *testing.T) {
	tm := newTeam(t)
	// Gemini CLI reads relay's settings overlay only from a folder that
	// root owns and no one else can write (not below /tmp).
	home := privateHome(t)
	for i, kv := range tm.env {
		if strings.HasPrefix(kv, "RELAY_HOME=") {
			tm.env[i] = "RELAY_HOME=" + home
		}
	}
	tmp := t.TempDir()
	seen, ran, listed := filepath.Join(tmp, "seen"), filepath.Join(tmp, "ran"), filepath.Join(tmp, "listed")
	dir := project(t, fmt.Sprintf(`
[[hooks.BeforeToolCall]]
matcher = "run_shell_command"
[[hooks.BeforeToolCall.hooks]]
command = '''
in=$(cat)
printf '%%s\n' "$in" >> "%s"
case "$in" in
*rm\ -rf*) echo "no deletions on Fridays: ask the human first" >&2; exit 2 ;;
*) echo "note: the listing is for the weekly report" ;;
esac
'''
`, seen))
	const clean, list = "clean the build folder", "list the project files"
	model := mockmodel.NewGemini(mockmodel.Options{Script: func(r mockmodel.Request) mockmodel.Reply {
		switch {
		case strings.Contains(r.LastUser, clean):
			return mockmodel.Reply{Text: "Cleaning up.", ToolUse: &mockmodel.ToolUse{Name: "run_shell_command",
				Input: map[string]any{"command": "touch " + ran + " && rm -rf build", "description": "clean"}}}
		case strings.Contains(r.LastUser, list):
			return mockmodel.Reply{Text: "Listing.", ToolUse: &mockmodel.ToolUse{Name: "run_shell_command",
				Input: map[string]any{"command": "touch " + listed + " && ls", "description": "list"}}}
		case strings.Contains(r.LastUser, `"response":`): // a tool's result
			return mockmodel.Reply{Text: "Understood."}
		}
		return mockmodel.Reply{Text: "OK."}
	}})
	t.Cleanup(model.Close)
	cmd := agenttest.Gemini(t, agenttest.GeminiOptions{Model: model.URL, WorkDir: dir, Env: tm.relayEnv(),
		ExtraArgs: []string{"--approval-mode", "yolo"}})
	carol := &screenCLI{name: "Carol", kind: "gemini", model: model, ready: agenttest.GeminiReady,
		term: agenttest.Start(t, cmd.Under(relayBin, "wrap", "--name", "Carol", "--"))}
	stopGently(t, carol.term)
	carol.waitTurn(t, `You are agent "Carol"`, 60*time.Second) // the typed primer
	carol.waitIdle(t)

	// Refused: the reason comes back as the tool's error.
	carol.submit(t, clean)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := model.WaitForRequest(ctx, "no deletions on Fridays")
	if err != nil {
		t.Fatalf("the refusal never reached the model: %v\nscreen:\n%s\nhook saw: %q\nlogs:\n%s", err, carol.screen(t), countLines(seen), tm.wrapperLog())
	}
	if !strings.Contains(req.LastUser, "ask the human first") || !strings.Contains(req.LastUser, "blocked") {
		t.Fatalf("the model's next request lacks the refusal: %q", req.LastUser)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("the refused command ran\nlogs:\n%s", tm.wrapperLog())
	}
	carol.waitIdle(t)

	// Let through with a note: the command runs, the note rides on its
	// result.
	carol.submit(t, list)
	req = carol.waitTurn(t, "weekly report", 60*time.Second)
	if !strings.Contains(req.LastUser, "note: the listing is for the weekly report") {
		t.Errorf("the note did not reach the model whole: %q", req.LastUser)
	}
	if _, err := os.Stat(listed); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the refused command ran later")
	}

	// The hook saw each call once, with the tool's name and input.
	lines := countLines(seen)
	if len(lines) != 2 {
		t.Fatalf("the hook ran %d times, want 2: %q", len(lines), lines)
	}
	for i, want := range []string{"rm -rf build", "&& ls"} {
		var p struct {
			Tool  string `json:"tool"`
			Input struct {
				Command string `json:"command"`
			} `json:"input"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &p); err != nil {
			t.Fatalf("hook input %q: %v", lines[i], err)
		}
		if p.Tool != "run_shell_command" || !strings.Contains(p.Input.Command, want) {
			t.Errorf("hook call %d saw %+v, want run_shell_command with %q", i+1, p, want)
		}
	}
}
